package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fleets admits the tests with fleets of their own in the order they called
// parallel: capacity at a time, and beyond that one more at a time, up to
// twice capacity, while the machine's CPU is idle enough (gate.admits). The
// go command releases paused parallel tests in no set order (it had started
// those declared longest first nearly in reverse), so TestMain hands its
// limit to fleets (useFleetLimit). With a fixed count, the package's last
// minutes ran two fleets on a machine 30-60 % idle once the other packages
// had ended.
var fleets = newGate()

const (
	// idleWindow is how far back the machine's idle CPU is averaged.
	idleWindow = 20 * time.Second
	// settle is how long after an admission no test is admitted beyond
	// capacity: a fleet's API servers start in its first 10 to 20 s, and
	// the idle window must see their load. Longer, it kept the last
	// minutes from admitting anything beyond capacity: the fleets there
	// end every minute or so, and each admission in their place started
	// the wait again.
	settle = 30 * time.Second
	// minIdle is the share of the machine's CPU that must have been idle
	// over idleWindow to admit a test beyond capacity. At 35 % the last
	// minutes of make test ran three fleets on a machine a third idle.
	minIdle = 0.25
	// sampleEvery is how often the gate reads the machine's CPU times.
	sampleEvery = 5 * time.Second
)

// gate is fleets' type.
type gate struct {
	mu   sync.Mutex
	cond *sync.Cond
	// capacity is how many tests run at once whatever the machine's load;
	// extra how many more may while it is idle enough; running how many do.
	capacity, extra, running int
	// registered counts the tests that called parallel; next is the turn
	// of the one to admit next.
	registered, next int
	// admitted is when the last test was admitted.
	admitted time.Time
	// cpu holds the machine's CPU times; nil: no test beyond capacity.
	cpu *cpuSampler
	now func() time.Time
}

func newGate() *gate {
	g := &gate{capacity: 1, now: time.Now}
	g.cond = sync.NewCond(&g.mu)
	return g
}

// register returns the caller's turn. Every test registers before any is
// admitted: t.Parallel returns only after every top-level test has called
// it.
func (g *gate) register() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.registered++
	return g.registered - 1
}

// admission is why a test was admitted beyond capacity.
type admission struct {
	// beside is how many tests ran when it was admitted; idle the share of
	// the machine's CPU idle over idleWindow before.
	beside int
	idle   float64
}

// admits says whether it is turn's turn and a place is free for it; extra
// is set when the place is beyond capacity. The caller holds g.mu.
func (g *gate) admits(turn int) (ok bool, extra *admission) {
	if g.next != turn {
		return false, nil
	}
	if g.running < g.capacity {
		return true, nil
	}
	if g.cpu == nil || g.running >= g.capacity+g.extra || g.now().Sub(g.admitted) < settle {
		return false, nil
	}
	idle, known := g.cpu.idleOver(idleWindow)
	if !known || idle < minIdle {
		return false, nil
	}
	return true, &admission{beside: g.running, idle: idle}
}

// enter waits until it is turn's turn and a place is free, and says why
// when the place is beyond capacity.
func (g *gate) enter(turn int) *admission {
	g.mu.Lock()
	defer g.mu.Unlock()
	for {
		ok, extra := g.admits(turn)
		if ok {
			g.next++
			g.running++
			g.admitted = g.now()
			g.cond.Broadcast()
			return extra
		}
		g.cond.Wait()
	}
}

// leave frees the caller's place.
func (g *gate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running--
	g.cond.Broadcast()
}

// watchCPU samples the machine's CPU times every sampleEvery until ctx
// ends, waking the tests waiting for a turn after each sample. Where
// /proc/stat cannot be read, nothing is admitted beyond capacity.
func (g *gate) watchCPU(ctx context.Context) error {
	s := &cpuSampler{}
	if err := s.sample(); err != nil {
		return err
	}
	g.mu.Lock()
	g.cpu = s
	g.extra = g.capacity
	g.mu.Unlock()
	go func() {
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if err := s.sample(); err != nil {
				fmt.Fprintf(os.Stderr, "fleets: read CPU times: %v\n", err)
			}
			g.mu.Lock()
			g.cond.Broadcast()
			g.mu.Unlock()
		}
	}()
	return nil
}

// cpuSampler keeps the machine's recent CPU times.
type cpuSampler struct {
	mu      sync.Mutex
	samples []cpuTimes
	// read returns the machine's CPU times now; nil: procStat.
	read func() (cpuTimes, error)
}

// cpuTimes is the machine's CPU time, all of it and the idle part, in the
// kernel's ticks, at a moment.
type cpuTimes struct {
	at          time.Time
	idle, total uint64
}

// keepSamples bounds the samples kept: a few idleWindows' worth.
const keepSamples = 4 * int(idleWindow/sampleEvery)

func (s *cpuSampler) sample() error {
	read := s.read
	if read == nil {
		read = procStat
	}
	c, err := read()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, c)
	if len(s.samples) > keepSamples {
		s.samples = append(s.samples[:0], s.samples[len(s.samples)-keepSamples:]...)
	}
	return nil
}

// idleOver returns the share of CPU time idle between the latest sample and
// the latest one at least window older, and false when no sample is that
// old.
func (s *cpuSampler) idleOver(window time.Duration) (float64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) < 2 {
		return 0, false
	}
	last := s.samples[len(s.samples)-1]
	for i := len(s.samples) - 2; i >= 0; i-- {
		first := s.samples[i]
		if last.at.Sub(first.at) < window {
			continue
		}
		if last.total <= first.total {
			return 0, false
		}
		return float64(last.idle-first.idle) / float64(last.total-first.total), true
	}
	return 0, false
}

// procStat reads the machine's CPU times from /proc/stat's first line:
// user, nice, system, idle, iowait, irq, softirq and steal ticks (guest time
// is within user's). Idle is idle and iowait.
func procStat() (cpuTimes, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuTimes{}, err
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return cpuTimes{}, fmt.Errorf("/proc/stat: %w", err)
	}
	c, err := parseCPULine(line)
	c.at = time.Now()
	return c, err
}

// parseCPULine parses /proc/stat's aggregate "cpu" line.
func parseCPULine(line string) (cpuTimes, error) {
	fields := strings.Fields(line)
	if len(fields) < 9 || fields[0] != "cpu" {
		return cpuTimes{}, fmt.Errorf("/proc/stat: first line %q is not the cpu line with 8 times", strings.TrimSpace(line))
	}
	var c cpuTimes
	for i, f := range fields[1:9] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/stat: cpu time %q: %w", f, err)
		}
		c.total += v
		if i == 3 || i == 4 {
			c.idle += v
		}
	}
	return c, nil
}

func TestParseCPULine(t *testing.T) {
	c, err := parseCPULine("cpu  100 5 50 800 20 3 2 0 7 0\n")
	require.NoError(t, err)
	assert.Equal(t, uint64(980), c.total, "user+nice+system+idle+iowait+irq+softirq+steal")
	assert.Equal(t, uint64(820), c.idle, "idle+iowait")
	for _, bad := range []string{"cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3", "cpu 1 2 x 4 5 6 7 8", "intr 1 2 3 4 5 6 7 8"} {
		_, err := parseCPULine(bad)
		assert.Error(t, err, bad)
	}
	_, err = procStat()
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Errorf("this machine's /proc/stat: %v", err)
	}
}

func TestIdleOver(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := &cpuSampler{}
	var next cpuTimes
	s.read = func() (cpuTimes, error) { return next, nil }
	at := func(sec int, idle, total uint64) {
		next = cpuTimes{at: t0.Add(time.Duration(sec) * time.Second), idle: idle, total: total}
		require.NoError(t, s.sample())
	}
	at(0, 0, 0)
	_, known := s.idleOver(30 * time.Second)
	assert.False(t, known, "one sample")
	at(10, 100, 200)
	_, known = s.idleOver(30 * time.Second)
	assert.False(t, known, "samples 10 s apart for a 30 s window")
	at(30, 500, 600) // 0..30: 500/600 idle
	idle, known := s.idleOver(30 * time.Second)
	require.True(t, known)
	assert.InDelta(t, 500.0/600, idle, 1e-9)
	at(45, 510, 1200) // 10..45 is the newest span of 30 s or more: 410/1000
	idle, known = s.idleOver(30 * time.Second)
	require.True(t, known)
	assert.InDelta(t, 0.41, idle, 1e-9)
	for i := range 2 * keepSamples {
		at(50+i, 510, 1200+uint64(i))
	}
	assert.Len(t, s.samples, keepSamples, "old samples are dropped")
}

func TestGateAdmitsBeyondCapacityOnlyWhenIdle(t *testing.T) {
	now := time.Unix(1000, 0)
	s := &cpuSampler{read: func() (cpuTimes, error) { return cpuTimes{at: now}, nil }}
	g := newGate()
	g.now = func() time.Time { return now }
	g.capacity, g.extra, g.cpu = 1, 1, s
	advance := func(d time.Duration, idleShare float64) {
		// Spread the share over the span, a sample every sampleEvery.
		for range int(d / sampleEvery) {
			before := s.samples[len(s.samples)-1]
			now = now.Add(sampleEvery)
			s.read = func() (cpuTimes, error) {
				return cpuTimes{at: now, idle: before.idle + uint64(idleShare*100), total: before.total + 100}, nil
			}
			require.NoError(t, s.sample())
		}
	}
	require.NoError(t, s.sample())
	first, second, third := g.register(), g.register(), g.register()

	ok, extra := g.admits(first)
	require.True(t, ok)
	require.Nil(t, extra, "within capacity")
	g.enter(first)

	ok, _ = g.admits(third)
	assert.False(t, ok, "not its turn")
	advance(2*settle, 0.1)
	ok, _ = g.admits(second)
	assert.False(t, ok, "capacity taken and the machine busy")
	advance(idleWindow, 0.5)
	ok, extra = g.admits(second)
	require.True(t, ok, "capacity taken and the machine idle")
	require.NotNil(t, extra)
	assert.Equal(t, 1, extra.beside)
	assert.InDelta(t, 0.5, extra.idle, 1e-9)
	g.enter(second)

	advance(2*settle, 0.9)
	ok, _ = g.admits(third)
	assert.False(t, ok, "capacity and extra taken")
	g.leave()
	ok, _ = g.admits(third)
	assert.True(t, ok, "a place beyond capacity freed while idle")
	g.admitted = now.Add(-settle / 2)
	ok, _ = g.admits(third)
	assert.False(t, ok, "too soon after the last admission")
	g.leave()
	ok, extra = g.admits(third)
	assert.True(t, ok, "within capacity even right after an admission")
	assert.Nil(t, extra)
}
