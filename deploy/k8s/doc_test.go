// Package k8s holds kvbench's example Kubernetes manifests: kvreplay ranks
// as an Indexed Job (with a merge Job) and as a Kubeflow MPIJob. Its test
// parses them and runs their commands on this machine.
package k8s
