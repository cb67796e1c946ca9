package k8s

import (
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// scheduling is the part of a pod template that places and restarts it,
// and of an MPIJob's replica spec, which the MPI Operator reads.
type scheduling struct {
	// RestartPolicy of an MPIJob's replica spec (kubeflow.org/v2beta1
	// ReplicaSpec.restartPolicy).
	RestartPolicy string `yaml:"restartPolicy"`
	Template      struct {
		Metadata struct {
			Labels map[string]string `yaml:"labels"`
		} `yaml:"metadata"`
		Spec struct {
			RestartPolicy string `yaml:"restartPolicy"`
			Affinity      struct {
				PodAntiAffinity struct {
					Required []struct {
						LabelSelector struct {
							MatchLabels map[string]string `yaml:"matchLabels"`
						} `yaml:"labelSelector"`
						TopologyKey string `yaml:"topologyKey"`
					} `yaml:"requiredDuringSchedulingIgnoredDuringExecution"`
				} `yaml:"podAntiAffinity"`
			} `yaml:"affinity"`
		} `yaml:"spec"`
	} `yaml:"template"`
}

// loadScheduling reads a manifest's Job template (key "") or its MPIJob
// replica specs (Launcher, Worker).
func loadScheduling(t *testing.T, name string) map[string]scheduling {
	t.Helper()
	var m struct {
		Spec struct {
			scheduling      `yaml:",inline"`
			MPIReplicaSpecs map[string]scheduling `yaml:"mpiReplicaSpecs"`
		} `yaml:"spec"`
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if m.Spec.MPIReplicaSpecs != nil {
		return m.Spec.MPIReplicaSpecs
	}
	return map[string]scheduling{"": m.Spec.scheduling}
}

// TestMPIJobLauncherNeverRestarts: the MPI Operator (v2beta1) overrides the
// launcher pod template's restartPolicy with the replica spec's, which
// defaults to OnFailure (ReplicaSpec.Template's doc; the controller's
// setRestartPolicy): a launcher whose mpirun failed would run it again in
// the same pod, its ranks writing over the first attempt's results. The
// restartPolicy Never must be the replica spec's.
func TestMPIJobLauncherNeverRestarts(t *testing.T) {
	l := loadScheduling(t, "kvreplay-mpijob.yaml")["Launcher"]
	if l.RestartPolicy != "Never" {
		t.Errorf("mpiReplicaSpecs.Launcher.restartPolicy %q: want Never (the operator's default is OnFailure, and it overrides the pod template's %q)",
			l.RestartPolicy, l.Template.Spec.RestartPolicy)
	}
	if p := l.Template.Spec.RestartPolicy; p != "" && p != l.RestartPolicy {
		t.Errorf("Launcher's template.spec.restartPolicy %q: the operator overrides it with the replica spec's %q", p, l.RestartPolicy)
	}
}

// TestRanksOnDistinctNodes: a rank is a host of its own (its local rank is
// 0, its --dir the node's NVMe under test, its RAM arena sized from the
// node's memory), so no two ranks' pods may share a node: each pod
// template keeps away, by hostname, from pods with its own labels.
func TestRanksOnDistinctNodes(t *testing.T) {
	for _, c := range []struct{ file, replica string }{
		{"kvreplay-indexed-job.yaml", ""},
		{"kvreplay-mpijob.yaml", "Worker"},
	} {
		s := loadScheduling(t, c.file)[c.replica]
		labels := s.Template.Metadata.Labels
		ok := false
		for _, term := range s.Template.Spec.Affinity.PodAntiAffinity.Required {
			sel := term.LabelSelector.MatchLabels
			matches := len(sel) > 0
			for k, v := range sel {
				if labels[k] != v {
					matches = false
				}
			}
			ok = ok || (matches && term.TopologyKey == "kubernetes.io/hostname")
		}
		if !ok {
			t.Errorf("%s %s: no required podAntiAffinity on kubernetes.io/hostname selecting the template's labels %v: two ranks may share a node",
				c.file, c.replica, labels)
		}
	}
}
