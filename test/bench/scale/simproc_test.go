package scale

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

// simProcessConcurrency is the registrations sim-agents runs at once.
const simProcessConcurrency = 64

// simProcess is the sim-agents command run as a child process: its agents
// share one connection to the hub, impersonating each cluster's agent.
type simProcess struct {
	cmd     *exec.Cmd
	in      io.WriteCloser
	answers chan string
	next    int
}

// startSimProcess builds and starts sim-agents against f's hub, with the
// hub admin's kubeconfig (allowed to impersonate); it stops with b, and its
// log (the agents' counters at the end) goes to b's log.
func startSimProcess(b *testing.B, f *benchkit.Fleet) *simProcess {
	b.Helper()
	bin := benchkit.Binary(b, "sim-agents", "./test/bench/cmd/sim-agents")
	kubeconfig := filepath.Join(b.TempDir(), "hub-admin.kubeconfig")
	if err := framework.WriteKubeconfig(kubeconfig, "hub", f.Hub.RESTConfig()); err != nil {
		b.Fatal(err)
	}
	p := &simProcess{answers: make(chan string, 1), next: 1}
	p.cmd = exec.Command(bin, "--hub-kubeconfig", kubeconfig, "--bootstrap-user", benchkit.SimBootstrapUser,
		"--concurrency", strconv.Itoa(simProcessConcurrency))
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(b.TempDir(), "sim-agents.log"))
	if err != nil {
		b.Fatal(err)
	}
	p.cmd.Stderr = logFile
	if err := p.cmd.Start(); err != nil {
		b.Fatalf("start sim-agents: %v", err)
	}
	go func() {
		lines := bufio.NewScanner(out)
		for lines.Scan() {
			p.answers <- lines.Text()
		}
		close(p.answers)
	}()
	b.Cleanup(func() {
		_ = p.in.Close()
		done := make(chan error, 1)
		go func() { done <- p.cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				b.Errorf("sim-agents: %v", err)
			}
		case <-time.After(time.Minute):
			_ = p.cmd.Process.Kill()
			if err := <-done; err != nil {
				b.Logf("sim-agents after the kill: %v", err)
			}
			b.Errorf("sim-agents did not stop within a minute of the end of its input; killed")
		}
		_ = logFile.Close()
		if data, err := os.ReadFile(logFile.Name()); err == nil {
			b.Logf("sim-agents log:\n%s", tail(string(data), 20))
		}
	})
	return p
}

// registerProgressPoll is how often register counts the Available
// clusters: a list of every cluster, itself a load on the hub.
const registerProgressPoll = time.Minute

// pid is the process's ID.
func (p *simProcess) pid() int { return p.cmd.Process.Pid }

// register registers n more clusters named sim-NNNNN after those registered
// before, and returns their names once every one is Joined and Available.
// It waits as long as registrations go on: it fails when the count of
// accepted and Available clusters (read with c) has not grown for
// -op-timeout, naming how far it got and at what rate.
func (p *simProcess) register(ctx context.Context, b *testing.B, n int, c client.Client) []string {
	b.Helper()
	first, last := p.next, p.next+n-1
	if _, err := fmt.Fprintf(p.in, "register sim- %d %d\n", first, last); err != nil {
		b.Fatalf("sim-agents: %v", err)
	}
	start := time.Now()
	startCount, err := availableClusters(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	best, lastGain := startCount, time.Now()
	tick := time.NewTicker(registerProgressPoll)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case answer, ok := <-p.answers:
			if !ok {
				b.Fatal("sim-agents exited; see its log")
			}
			if !strings.HasPrefix(answer, "ok ") {
				b.Fatalf("sim-agents: register %d..%d: %s", first, last, answer)
			}
			done = true
		case <-ctx.Done():
			b.Fatal(ctx.Err())
		case <-tick.C:
			got, err := availableClusters(ctx, c)
			if err != nil {
				b.Logf("sim-agents: register %d..%d: counting Available clusters: %v", first, last, err)
				continue
			}
			if got > best {
				best, lastGain = got, time.Now()
				b.Logf("sim-agents: register %d..%d: %d of %d clusters Available after %s (%.2f per second)", first, last,
					got-startCount, n, benchkit.Seconds(time.Since(start)), float64(got-startCount)/time.Since(start).Seconds())
			}
			if time.Since(lastGain) > *stepTimeout {
				b.Fatalf("sim-agents: register %d..%d: no cluster became Available for %s; %d of %d registered in %s (%.2f per second)",
					first, last, *stepTimeout, best-startCount, n, benchkit.Seconds(time.Since(start)), float64(best-startCount)/time.Since(start).Seconds())
			}
		}
	}
	p.next = last + 1
	names := make([]string, 0, n)
	for i := first; i <= last; i++ {
		names = append(names, fmt.Sprintf("sim-%05d", i))
	}
	return names
}

// leaseLatency asks sim-agents how long its agents' lease renewals took
// since it last asked, and starts a new window there.
func (p *simProcess) leaseLatency(b *testing.B) benchkit.Summary {
	b.Helper()
	if _, err := fmt.Fprintln(p.in, "lease-latency"); err != nil {
		b.Fatalf("sim-agents: %v", err)
	}
	answer, ok := <-p.answers
	if !ok {
		b.Fatal("sim-agents exited; see its log")
	}
	data, found := strings.CutPrefix(answer, "lease-latency ")
	var l benchkit.Summary
	if !found {
		b.Fatalf("sim-agents: lease-latency: %s", answer)
	}
	if err := json.Unmarshal([]byte(data), &l); err != nil {
		b.Fatalf("sim-agents: lease-latency %q: %v", data, err)
	}
	return l
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
