"""The one sacct command line swftools recommends (README, ``convert --help``, the Slurm
reader's errors). Kept free of imports: the CLI's help text reads it at start-up.

Why each part: ``TZ=UTC`` makes sacct print UTC times (no ``--tz`` needed); ``--allusers``
every user's jobs, not only the caller's; ``--allocations`` job lines only (steps are not jobs;
the file is about a third as long); ``--parsable2`` ``|``-separated fields without a trailing
``|``; ``--starttime``/``--endtime`` the period (sacct's default is since midnight today);
``--format`` the columns the reader uses, the header naming them, so no ``--columns`` is needed.
Without ``--duplicates`` each job is there once (its last run, if requeued).
"""

RECOMMENDED_FORMAT = ("JobIDRaw,JobID,User,Group,Partition,Submit,Start,End,ElapsedRaw,"
                      "Timelimit,State,NNodes,NCPUS,ReqTRES,AllocTRES,NodeList")
RECOMMENDED_COMMAND = ("TZ=UTC sacct --allusers --allocations --parsable2 --starttime "
                       f"2024-01-01 --endtime 2024-02-01 --format={RECOMMENDED_FORMAT}")
