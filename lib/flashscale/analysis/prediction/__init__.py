"""The prediction model: what N devices in a layout should deliver, before it is built, from one device's curve.

    curve        one device's curve, indexed by the I/O outstanding on it (``figures``: a datasheet's rates instead)
    routing      what each device of a layout receives of its requests, and how unevenly
    ceilings     the one ceilings type (``Ceilings``: PCIe, uplink, network, memory, cores, a device's datasheet)
                 and each ceiling as a term of a prediction, or held against a measured table
    loads        whether what a number compares was measured at the same load (the I/O in flight)
    calibration  a layer's own cost, measured on fewer devices than it is predicted on
    predict      the model: the devices' term, the layer's cost, the ceilings; the least binds
    scoring      predictions stated before measuring, scored after, as a report says them
    sizing       ``flashscale plan``: how many devices (and hosts) reach a target, and what binds first

README.md beside this file gives the order a prediction flows through them.
"""
