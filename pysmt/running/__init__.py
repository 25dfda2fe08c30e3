"""Running work on this machine: worker pools under fork, forkserver or spawn (``parallel``), children that die with
their parent and SIGTERM as Ctrl-C (``processes``), torch's thread policy (``torch_threads``), ``--memory``
sizes (``memory_budget``), resumable jobs' records and step markers (``jobs``) and one run per output
folder (``folder_lock``)."""
