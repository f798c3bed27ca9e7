package benchkit

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ProcMemory is a process's memory as /proc/<pid>/status and
// /proc/<pid>/smaps_rollup report it, in bytes.
type ProcMemory struct {
	RSS     uint64 // VmRSS: resident now
	HWM     uint64 // VmHWM: peak resident
	RSSAnon uint64 // RssAnon: resident anonymous pages (heap, stacks, runtime)
	RSSFile uint64 // RssFile: resident pages of mapped files (the binary)
	// PSS is the proportional set size: each resident page divided by the
	// number of processes mapping it, so the PSS of processes sharing one
	// binary file counts its shared pages once in their sum. Zero when
	// smaps_rollup cannot be read.
	PSS     uint64
	PSSAnon uint64 // Pss_Anon
	PSSFile uint64 // Pss_File
}

// ReadProcMemory reads VmRSS, VmHWM, RssAnon and RssFile from
// /proc/<pid>/status and Pss, Pss_Anon and Pss_File from
// /proc/<pid>/smaps_rollup (left zero when the kernel has no smaps_rollup).
func ReadProcMemory(pid int) (ProcMemory, error) {
	var m ProcMemory
	file, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	defer file.Close()
	if m, err = ParseProcStatus(file); err != nil {
		return m, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	rollup, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return m, err
	}
	defer rollup.Close()
	if err := parseKB(rollup, map[string]*uint64{"Pss:": &m.PSS, "Pss_Anon:": &m.PSSAnon, "Pss_File:": &m.PSSFile}, 1); err != nil {
		return m, fmt.Errorf("/proc/%d/smaps_rollup: %w", pid, err)
	}
	return m, nil
}

// ParseProcStatus reads VmRSS, VmHWM, RssAnon and RssFile from the text of
// /proc/<pid>/status; VmRSS and VmHWM must be there.
func ParseProcStatus(r io.Reader) (ProcMemory, error) {
	var m ProcMemory
	fields := map[string]*uint64{"VmRSS:": &m.RSS, "VmHWM:": &m.HWM, "RssAnon:": &m.RSSAnon, "RssFile:": &m.RSSFile}
	if err := parseKB(r, fields, 0); err != nil {
		return m, err
	}
	if m.RSS == 0 && m.HWM == 0 {
		return m, fmt.Errorf("no VmRSS or VmHWM line")
	}
	return m, nil
}

// parseKB fills fields (line label → destination) from "<label> <n> kB"
// lines of r, such as those of /proc/<pid>/status. It fails when fewer than
// atLeast of the labels are found, or a label's line is garbled.
func parseKB(r io.Reader, fields map[string]*uint64, atLeast int) error {
	found := 0
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		parts := strings.Fields(sc.Text())
		if len(parts) == 0 {
			continue
		}
		dst, ok := fields[parts[0]]
		if !ok {
			continue
		}
		v, err := kbValue(parts, sc.Text())
		if err != nil {
			return err
		}
		*dst = v
		found++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if found < atLeast {
		return fmt.Errorf("found %d of the lines %v", found, slices.Sorted(maps.Keys(fields)))
	}
	return nil
}

// kbValue is the value in bytes of line, "<label> <n> kB", split into parts.
func kbValue(parts []string, line string) (uint64, error) {
	if len(parts) != 3 || parts[2] != "kB" {
		return 0, fmt.Errorf("unexpected line %q", line)
	}
	kb, err := strconv.ParseUint(parts[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("line %q: %w", line, err)
	}
	return kb << 10, nil
}

// ProcCPU is a process's CPU time (utime + stime) from /proc/<pid>/stat.
func ProcCPU(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseProcStat(string(data))
}

// clockTicks is USER_HZ, the unit of the CPU times in /proc/<pid>/stat: 100
// on every Linux architecture Go supports.
const clockTicks = 100

// ParseProcStat returns utime + stime from the text of /proc/<pid>/stat.
// The command name (field 2) is in parentheses and may contain spaces, so
// the fields are counted after its closing parenthesis: utime and stime are
// fields 14 and 15 of the line, 12 and 13 after the name.
func ParseProcStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in %q", stat)
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("too few fields in %q", stat)
	}
	var ticks uint64
	for _, s := range f[11:13] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// ResetPeak resets the peak resident set size (VmHWM) of process pid to its
// current resident size, so that a later VmHWM is the peak since the
// reset: "5" written to /proc/<pid>/clear_refs (as root, or the process's
// owner).
func ResetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}
