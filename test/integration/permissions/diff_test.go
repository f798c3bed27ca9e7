package permissions

import "testing"

// TestDiff checks that a difference of the file names each line gained
// (+) or lost (-) under its identity, and only those.
func TestDiff(t *testing.T) {
	want := "# header\n\n[a]\n# user: a\nget secrets ns:x\nlist secrets ns:x\n\n[b]\n# nothing\n"
	got := "# header\n\n[a]\n# user: a\nget secrets ns:x\nwatch secrets ns:x\n\n[b]\n# nothing\n\n[c]\nget pods ns:y\n"
	const d = "[a]\n  + watch secrets ns:x\n  - list secrets ns:x\n[c]\n  + get pods ns:y\n"
	if got := diff(want, got); got != d {
		t.Errorf("diff:\n%s\nwant:\n%s", got, d)
	}
	if got := diff(want, "# header\n[b]\n# nothing\n[a]\nlist secrets ns:x\n# user: a\nget secrets ns:x\n"); got != "(the same lines in another order)\n" {
		t.Errorf("diff of the same lines in another order:\n%s", got)
	}
}
