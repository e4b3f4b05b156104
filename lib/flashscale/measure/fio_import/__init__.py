"""fio's output from anywhere made a campaign folder: ``flashscale import`` (fio 2.0.10 to 3.x: json, json+, terse,
normal, client/server), and the readers of every form fio wrote that ``measure.fio_output`` reads through.

    bounds      how much of a file is read, and how much of what was read is repeated: both bounded
    documents   a file's bytes decoded and cut into the JSON documents fio wrote, with the text around each
    versions    each fio version's JSON read into the shape fio 3.33 writes (``normalize``)
    terse       fio's terse output (``--minimal``) read into that shape
    normal      fio's normal (human) output read into that shape
    derived     what fio's numbers imply of a run where fio echoes no options
    what_ran    what a run was, from fio's own output: rw, bs, iodepth, numjobs, ioengine, size, runtime, target
    targets     how many devices a run's filename or directory list names
    file_names  what a file's name (or a map, or the user) says of the run it holds
    checks      what an imported row's numbers cannot be; that a file's rows make a table
    finder      which files an import reads
    contents    whether a file holds fio's output, and what it holds instead
    reader      one file read into rows of the results table, every row with its source and what it was read from
    swap        the import's folder written whole beside the old one, then put in its place at once
    importer    the campaign folder an import writes, one import after another (``run_import``)
"""
