package benchkit

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// pageSize is the size of the pages /proc/<pid>/pagemap has one entry for.
var pageSize = uint64(os.Getpagesize())

// The bits of a /proc/<pid>/pagemap entry (Documentation/admin-guide/mm/pagemap.rst).
const (
	pagemapPresent = uint64(1) << 63
	pagemapPFNMask = uint64(1)<<55 - 1
)

// UniqueResident returns the resident memory of the processes pids together,
// each physical page counted once however many of them map it: the memory
// they would free by all stopping, were no other process mapping the same
// pages (page cache of their binary aside). It reads the page frame numbers
// from /proc/<pid>/pagemap, which only a privileged reader sees; ok is false
// when they read as zero.
func UniqueResident(pids ...int) (bytes uint64, ok bool, err error) {
	frames := map[uint64]struct{}{}
	for _, pid := range pids {
		present, err := residentFrames(pid, frames)
		if err != nil {
			return 0, false, err
		}
		if present > 0 && len(frames) == 0 {
			return 0, false, nil
		}
	}
	return uint64(len(frames)) * pageSize, true, nil
}

// residentFrames adds the page frame numbers of pid's resident pages to
// frames and returns how many resident pages it saw.
func residentFrames(pid int, frames map[uint64]struct{}) (present int, err error) {
	maps, err := os.Open(fmt.Sprintf("/proc/%d/maps", pid))
	if err != nil {
		return 0, err
	}
	defer maps.Close()
	pagemap, err := os.Open(fmt.Sprintf("/proc/%d/pagemap", pid))
	if err != nil {
		return 0, err
	}
	defer pagemap.Close()
	buf := make([]byte, 8*4096)
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasSuffix(line, "[vsyscall]") {
			continue
		}
		start, end, err := parseMapsRange(line)
		if err != nil {
			return present, fmt.Errorf("/proc/%d/maps: %w", pid, err)
		}
		for off := start / pageSize * 8; off < end/pageSize*8; {
			n := min(uint64(len(buf)), end/pageSize*8-off)
			if _, err := pagemap.ReadAt(buf[:n], int64(off)); err != nil && err != io.EOF {
				return present, fmt.Errorf("/proc/%d/pagemap: %w", pid, err)
			}
			for i := uint64(0); i < n; i += 8 {
				e := binary.LittleEndian.Uint64(buf[i:])
				if e&pagemapPresent == 0 {
					continue
				}
				present++
				if pfn := e & pagemapPFNMask; pfn != 0 {
					frames[pfn] = struct{}{}
				}
			}
			off += n
		}
	}
	return present, sc.Err()
}

// parseMapsRange returns the address range of one /proc/<pid>/maps line,
// "start-end perms offset dev inode path" in hexadecimal.
func parseMapsRange(line string) (start, end uint64, err error) {
	r, _, _ := strings.Cut(line, " ")
	s, e, ok := strings.Cut(r, "-")
	if !ok {
		return 0, 0, fmt.Errorf("no address range in %q", line)
	}
	if start, err = strconv.ParseUint(s, 16, 64); err != nil {
		return 0, 0, fmt.Errorf("line %q: %w", line, err)
	}
	if end, err = strconv.ParseUint(e, 16, 64); err != nil {
		return 0, 0, fmt.Errorf("line %q: %w", line, err)
	}
	return start, end, nil
}
