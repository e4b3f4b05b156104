"""Campaigns: what runs a sweep, from the spec to the table, and one module per place a sweep runs.

    parameters  the one table of notebook parameters: their types, meanings, defaults and the rules between them
    campaign    the spec (``CampaignSpec``) and the run; ``choose``, the one decision of where it runs
    place       the one interface every place implements (check, facts, layouts, make, truth, build, undo)
    emulated    the capped emulated array of loop devices (the default, whose truth is known)
    directories plain directories on the local disk, where loop devices cannot be made
    testbed     real devices named by identity in a test bed file, every destructive step through the guard
    vmlab       a VM with a real kernel (md, IMSM, LVM), the campaign run inside it as a test bed
    hosts       a cluster's places: emulated hosts, hosts serving fio themselves, hosts over SSH
    cluster     hosts, each with its own array and fio server, measured from one driver
    stated      what a campaign states before it builds a layout: its prediction and the limits it used

The layers below (system, arrays, measure, analysis, publish) are the same code wherever a campaign runs; a new
place implements ``place.Place`` in a module here, adds a room in ``system`` or ``arrays``, and is named in the
factory (``campaign.choose``); never a copy of the sweep.
"""
