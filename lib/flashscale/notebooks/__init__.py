"""Notebooks: what runs the parameterized notebooks of a study and publishes them.

    jupyter_kernel  the kernel a notebook runs in, spoken to over Unix sockets (IPC), never TCP
    cost       what a campaign costs before it starts: device time and wall time from its own parameters
    estimate   each notebook's cost from the values it will run with (its parameters cell under the campaign's)
    execute    a campaign file's notebooks executed by papermill, parameters checked first, reports exported
    studies    a study: the numbered notebooks of one campaign, each stage's own campaign folder
    reproduce  a published report run again here, and the two compared by one agreement rule
"""
