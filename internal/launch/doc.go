// Package launch owns where a process of a multi-host run stands and when it
// starts. A run is launched by mpirun, srun or a Kubernetes Indexed Job: each
// process finds its Rank in the launcher's environment (Open MPI, PMIx, PMI,
// Slurm, or a Job's JOB_COMPLETION_INDEX) or in --rank/--ranks (Find,
// FromFlags); its paths come from templates with {rank} (Template); and it
// starts at one instant, given as --start-at (ParseStartAt, WaitUntil) or
// agreed at a --start-barrier directory the ranks share (Barrier).
//
// kvbench has no protocol of its own between ranks but files in a shared
// directory: kvreport merge joins their results. The messages name
// kvreplay's flags, since they answer its command line. It uses the
// standard library only.
package launch
