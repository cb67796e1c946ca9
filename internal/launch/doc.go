// Package launch owns where a process of a multi-host run stands and when it
// starts. A run is launched by mpirun, srun or a Kubernetes Indexed Job: each
// process finds its Rank in the launcher's environment (Open MPI, PMIx, PMI,
// LSF's jsrun, Slurm, or a Job's JOB_COMPLETION_INDEX) or in --rank/--ranks (Find,
// FromFlags); its paths come from templates with {rank} (Template); and it
// starts at one instant, given as --start-at (ParseStartAt, WaitUntil) or
// agreed at a --start-barrier directory the ranks share (Barrier).
//
// Slurm's variables name a rank only inside a job step, which srun starts: a
// batch script of several tasks that runs kvreplay itself is refused, not
// taken for rank 0. Rank.Local, the rank's place among its host's ranks,
// comes from the launcher (Open MPI, Slurm, the PMI launchers' own
// variables) or from KVBENCH_LOCAL_RANK with --rank, and is LocalUnknown
// where none says. Rank.Run, the run's id (KVBENCH_RUN_ID, or the
// launcher's job), lets the barrier refuse a killed run's ready files.
//
// kvbench has no protocol of its own between ranks but files in a shared
// directory: kvreport merge joins their results. The messages name
// kvreplay's flags, since they answer its command line. It uses the
// standard library only.
package launch
