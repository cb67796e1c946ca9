package launch

import (
	"fmt"
	"strconv"
)

// MinKillGrace is the time, in seconds, a rank asks between its
// launcher's SIGTERM and SIGKILL: enough to stop its I/O, remove its files
// and write its partial result (a rank of hundreds of objects took 0.6 s
// alone on 2 cores; two beside each other, more than 1 s).
const MinKillGrace = 5

// sigkillVar is Open MPI's (4.x, ORTE) time between the signals it sends a
// job's processes when mpirun is interrupted: SIGCONT, then SIGTERM that
// many seconds later, then SIGKILL as many seconds after that; 1 when
// unset. mpirun passes --mca odls_base_sigkill_timeout N to the ranks in
// this variable.
const sigkillVar = "OMPI_MCA_odls_base_sigkill_timeout"

// ortePeer is set in the processes of Open MPI 4.x's mpirun (ORTE), whose
// signals were measured (4.1.4): Open MPI 5's (PRRTE) and other MPIs'
// are not said to be too soon.
const ortePeer = "OMPI_MCA_orte_hnp_uri"

// KillGrace says, for a rank r that Open MPI 4's mpirun started, when its
// SIGKILL comes less than MinKillGrace seconds after its SIGTERM (an
// interrupted run's ranks killed before they write their results or
// remove their files), what to pass mpirun; "" otherwise (another
// launcher, or a grace long enough). getenv reads the environment.
func KillGrace(r Rank, getenv func(string) string) string {
	if r.Source != "OMPI_COMM_WORLD_RANK" || getenv(ortePeer) == "" {
		return ""
	}
	grace, what := 1, "by default"
	if v := getenv(sigkillVar); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return ""
		}
		grace, what = n, "with --mca odls_base_sigkill_timeout "+v
	}
	if grace >= MinKillGrace {
		return ""
	}
	return fmt.Sprintf("note: an interrupted mpirun kills its ranks %d s after it asks them to stop (%s), which may be too soon for them to write their partial results and remove their files: run mpirun --mca odls_base_sigkill_timeout %d (it waits as long again before asking)",
		grace, what, MinKillGrace*2)
}
