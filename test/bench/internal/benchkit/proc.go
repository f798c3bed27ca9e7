package benchkit

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// ProcMemory is a process's memory as /proc/<pid>/status reports it, in bytes.
type ProcMemory struct {
	RSS uint64 // VmRSS: resident now
	HWM uint64 // VmHWM: peak resident
}

// ReadProcMemory reads VmRSS and VmHWM from /proc/<pid>/status.
func ReadProcMemory(pid int) (ProcMemory, error) {
	file, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcMemory{}, err
	}
	defer file.Close()
	m, err := ParseProcStatus(file)
	if err != nil {
		return m, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return m, nil
}

// ParseProcStatus reads VmRSS and VmHWM from the text of /proc/<pid>/status.
func ParseProcStatus(r io.Reader) (ProcMemory, error) {
	var m ProcMemory
	fields := map[string]*uint64{"VmRSS:": &m.RSS, "VmHWM:": &m.HWM}
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
		if len(parts) != 3 || parts[2] != "kB" {
			return m, fmt.Errorf("unexpected line %q", sc.Text())
		}
		kb, err := strconv.ParseUint(parts[1], 10, 64)
		if err != nil {
			return m, fmt.Errorf("line %q: %w", sc.Text(), err)
		}
		*dst = kb << 10
		found++
	}
	if err := sc.Err(); err != nil {
		return m, err
	}
	if found != len(fields) {
		return m, fmt.Errorf("no VmRSS or VmHWM line")
	}
	return m, nil
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
