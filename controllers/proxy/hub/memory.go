package hub

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// The default buffer budget is a share of the memory the tunnel may use:
// the smaller of its container's memory limit and GOMEMLIMIT.
const (
	// BufferBudgetShare is the share of that memory: a buffer's backing
	// array may be twice what it holds, and without GOMEMLIMIT the Go
	// collector lets the heap reach twice what is live, so an eighth held
	// in buffers is at most half the limit, and the rest of the process
	// (the tunnels themselves and the ManagedCluster cache) keeps the other
	// half.
	BufferBudgetShare = 8
	// DefaultMemoryLimit is the tunnel Deployment's memory limit
	// (config/hub), assumed when the process knows of no limit.
	DefaultMemoryLimit = 512 << 20
	// MinBufferBudget is the smallest budget: two connections' buffers
	// at the point the tunnel library pauses them.
	MinBufferBudget = 4 << 20
)

// MemoryLimit returns the memory the process may use, the smaller of its
// cgroup's limit and GOMEMLIMIT, and whether it found either.
func MemoryLimit() (int64, bool) {
	limit := int64(math.MaxInt64)
	if l := debug.SetMemoryLimit(-1); l > 0 && l < limit {
		limit = l
	}
	if l, ok := cgroupMemoryLimit("/proc/self/cgroup", "/sys/fs/cgroup"); ok && l < limit {
		limit = l
	}
	return limit, limit != math.MaxInt64
}

// DefaultBufferBudget is the buffer budget for a process that may use
// limit bytes (DefaultMemoryLimit when it is not known).
func DefaultBufferBudget() int64 {
	limit, ok := MemoryLimit()
	if !ok {
		limit = DefaultMemoryLimit
	}
	return BufferBudgetFor(limit)
}

// BufferBudgetFor is the default budget for a memory limit.
func BufferBudgetFor(limit int64) int64 {
	return max(limit/BufferBudgetShare, MinBufferBudget)
}

// cgroupMemoryLimit reads the memory limit of the process's cgroup, v2
// (memory.max) or v1 (memory.limit_in_bytes), from the cgroup file
// /proc/self/cgroup and the hierarchy mounted at root. In a container the
// process's cgroup is usually the root of its namespace.
func cgroupMemoryLimit(procCgroup, root string) (int64, bool) {
	data, err := os.ReadFile(procCgroup)
	if err != nil {
		return 0, false
	}
	var candidates []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-ID:controller-list:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		path := parts[2]
		switch {
		case parts[0] == "0" && parts[1] == "":
			candidates = append(candidates, filepath.Join(root, path, "memory.max"), filepath.Join(root, "memory.max"))
		case hasController(parts[1], "memory"):
			candidates = append(candidates, filepath.Join(root, "memory", path, "memory.limit_in_bytes"), filepath.Join(root, "memory", "memory.limit_in_bytes"))
		}
	}
	for _, c := range candidates {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		// cgroup v1 reports "no limit" as the largest page-aligned int64.
		if err != nil || n <= 0 || n >= math.MaxInt64/2 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
