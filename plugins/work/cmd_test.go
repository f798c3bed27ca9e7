package work

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestFlagMeanings(t *testing.T) {
	root := NewCmdWork(genericclioptions.NewConfigFlags(false), genericiooptions.NewTestIOStreamsDiscard())
	for _, sub := range root.Commands() {
		t.Run(sub.Name(), func(t *testing.T) {
			// --cluster is kubectl's kubeconfig cluster; managed clusters are --clusters.
			if f := sub.LocalFlags().Lookup("cluster"); f != nil {
				t.Errorf("work %s has a local --cluster flag, which hides kubectl's: name managed clusters with --clusters", sub.Name())
			}
			if f := sub.LocalFlags().ShorthandLookup("A"); f != nil && f.Name != "all-namespaces" {
				t.Errorf("work %s: -A is --%s, want --all-namespaces", sub.Name(), f.Name)
			}
		})
	}
	get, _, err := root.Find([]string{"get"})
	if err != nil {
		t.Fatal(err)
	}
	if err := get.ParseFlags([]string{"--all-clusters"}); err != nil {
		t.Fatal(err)
	}
	if v := get.Flags().Lookup("all-namespaces").Value.String(); v != "true" {
		t.Errorf("--all-clusters left --all-namespaces %s, want it an alias", v)
	}
}
