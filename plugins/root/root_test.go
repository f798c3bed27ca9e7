package root

import (
	"testing"

	"k8s.io/cli-runtime/pkg/genericiooptions"
)

func TestPlacementVerbs(t *testing.T) {
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
	for _, flag := range [][]string{{"placement", "create", "clustersets"}, {"work", "create", "placement"}, {"clusterset", "set", "clusters"}} {
		sub, _, _ := cmd.Find(flag[:2])
		if _, ok := sub.GetFlagCompletionFunc(flag[2]); !ok {
			t.Errorf("%s %s --%s has no completion", flag[0], flag[1], flag[2])
		}
	}
}
