package root

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestVerbGroupsAndCompletion(t *testing.T) {
	cmd := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	tests := []struct {
		path  []string
		group string
	}{
		{[]string{"clusterset", "create"}, groupPlacement}, {[]string{"clusterset", "get"}, groupPlacement},
		{[]string{"clusterset", "delete"}, groupPlacement}, {[]string{"clusterset", "set"}, groupPlacement},
		{[]string{"clusterset", "bind"}, groupPlacement}, {[]string{"clusterset", "unbind"}, groupPlacement},
		{[]string{"placement", "create"}, groupPlacement}, {[]string{"placement", "get"}, groupPlacement},
		{[]string{"placement", "decisions"}, groupPlacement}, {[]string{"placement", "explain"}, groupPlacement},
		{[]string{"placement", "delete"}, groupPlacement},
		{[]string{"work", "create"}, groupHub}, {[]string{"work", "get"}, groupHub}, {[]string{"work", "delete"}, groupHub},
		{[]string{"get", "clusters"}, groupHub},
		{[]string{"addon", "enable"}, groupHub}, {[]string{"addon", "disable"}, groupHub}, {[]string{"addon", "list"}, groupHub},
		{[]string{"addon", "get"}, groupHub}, {[]string{"addon", "create"}, groupHub},
		{[]string{"upgrade", "hub"}, groupHub}, {[]string{"upgrade", "klusterlet"}, groupHub},
		{[]string{"proxy", "kubeconfig"}, groupHub},
	}
	for _, tt := range tests {
		t.Run(tt.path[0]+" "+tt.path[1], func(t *testing.T) {
			sub, _, err := cmd.Find(tt.path)
			if err != nil || sub.Name() != tt.path[1] {
				t.Fatalf("find %v: %v (found %q)", tt.path, err, sub.Name())
			}
			if sub.Parent().GroupID != tt.group {
				t.Errorf("%s is in group %q, want %q", tt.path[0], sub.Parent().GroupID, tt.group)
			}
			if sub.Example == "" || sub.RunE == nil {
				t.Errorf("%v has no example or no RunE", tt.path)
			}
			if sub.ValidArgsFunction == nil {
				t.Errorf("%v completes no arguments", tt.path)
			}
		})
	}
	for _, tt := range []struct {
		path []string
		flag string
	}{
		{[]string{"placement", "create"}, "clustersets"}, {[]string{"work", "create"}, "placement"},
		{[]string{"clusterset", "set"}, "clusters"}, {[]string{"accept"}, "clusters"}, {[]string{"get", "clusters"}, "clusterset"},
		{[]string{"addon", "enable"}, "names"}, {[]string{"addon", "enable"}, "clusters"}, {[]string{"addon", "disable"}, "names"},
		{[]string{"addon", "disable"}, "clusters"}, {[]string{"addon", "get"}, "clusters"}, {[]string{"addon", "create"}, "placement"},
	} {
		sub, _, err := cmd.Find(tt.path)
		if err != nil {
			t.Fatalf("find %v: %v", tt.path, err)
		}
		if _, ok := sub.GetFlagCompletionFunc(tt.flag); !ok {
			t.Errorf("%v --%s has no completion", tt.path, tt.flag)
		}
	}
}

// TestTopLevelVerbs checks the group of the verbs without subcommands, and
// that none of them is hidden from the help and the completion.
func TestTopLevelVerbs(t *testing.T) {
	cmd := NewCmdRoot(genericiooptions.NewTestIOStreamsDiscard())
	for name, group := range map[string]string{"accept": groupHub, "join": groupManagedCluster, "unjoin": groupManagedCluster, "version": groupOther, "credentials": groupOther} {
		sub, _, err := cmd.Find([]string{name})
		if err != nil || sub.Name() != name {
			t.Fatalf("find %s: %v", name, err)
		}
		if sub.GroupID != group || !sub.IsAvailableCommand() || sub.Example == "" || sub.RunE == nil {
			t.Errorf("%s: group %q (want %q), available %v, example %v, RunE %v", name, sub.GroupID, group, sub.IsAvailableCommand(), sub.Example != "", sub.RunE != nil)
		}
	}
}
