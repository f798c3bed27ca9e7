// Package process runs the child processes of a test environment: every
// one in its own process group, killed by the kernel if the process that
// started it dies (Pdeathsig), so that an interrupted or crashed test
// leaves nothing running, with its output in a log file.
package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Process is one child process of the framework: an etcd, a kube-apiserver, a
// kube-controller-manager or a component run by the Runner.
//
// Every child runs in its own process group and gets SIGKILL from the kernel if
// the process that started it dies (Pdeathsig), so an interrupted or crashed
// test leaves nothing running.
type Process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	mu      sync.Mutex
	err     error
}

// Start starts path with args and env (appended to a minimal base
// environment) in the working directory workDir, writing stdout and stderr to
// logPath.
func Start(name, path string, args, env []string, workDir, logPath string) (*Process, error) {
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log for %s: %w", name, err)
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = workDir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(baseEnv(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := startLocked(cmd); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s (%s): %w", name, path, err)
	}
	p := &Process{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		_ = logFile.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// baseEnv is the environment every child starts from: enough to run, and
// nothing that points a client at a non-loopback address (no KUBERNETES_SERVICE_*,
// no proxies, no ambient KUBECONFIG). GORACE passes through, so binaries
// built with -race report where make test-race collects races, and so do the
// Go runtime's collector settings (GOGC, GOMEMLIMIT), which make test uses to
// trade the control planes' spare memory for CPU.
func baseEnv() []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, name := range []string{"TMPDIR", "GORACE", "GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// startLocked starts cmd from a goroutine locked to its OS thread. Pdeathsig is
// delivered when the parent thread exits; the Go runtime does not let locked
// threads run other goroutines, so the locked thread stays alive for as long as
// the process does.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd  *exec.Cmd
	errc chan error
}

func startLocked(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread()
			for r := range spawner.reqs {
				r.errc <- r.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, errc: errc}
	return <-errc
}

// Exited reports whether the process has exited, and with what error.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return true, p.err
	default:
		return false, nil
	}
}

// Name returns the name the process was started with, as errors give it.
func (p *Process) Name() string { return p.name }

// LogPath returns the file receiving the process's stdout and stderr.
func (p *Process) LogPath() string { return p.logPath }

// LogContains reports whether the process's log contains s.
func (p *Process) LogContains(s string) bool {
	b, err := os.ReadFile(p.logPath)
	return err == nil && strings.Contains(string(b), s)
}

// LogTail returns the last n lines of the process's log, for an error that
// must explain itself where the log is not kept (a CI run's output).
func (p *Process) LogTail(n int) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Pid returns the process ID.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// killWait is how long Stop waits for a killed process to be reaped before
// it reports it left running. On a machine busy with make test's control
// planes, a node's kube-network-policies once took longer than 10 s.
const killWait = time.Minute

// Stop sends SIGTERM to the process group, waits up to grace, then SIGKILLs it.
// It is safe to call more than once.
func (p *Process) Stop(grace time.Duration) error {
	if exited, _ := p.Exited(); exited {
		return nil
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-time.After(killWait):
		return fmt.Errorf("%s (pid %d) did not exit after SIGKILL", p.name, p.cmd.Process.Pid)
	}
}

// WaitFor polls check every interval until it returns true, returns an error,
// the process exits, or ctx ends. The error names what was awaited and points
// at the process log.
func (p *Process) WaitFor(ctx context.Context, what string, check func(context.Context) (bool, error)) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		if exited, exitErr := p.Exited(); exited {
			return fmt.Errorf("%s exited (%v) before %s; see %s, which ends:\n%s", p.name, exitErr, what, p.logPath, p.LogTail(5))
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("timed out waiting for %s of %s (last error: %v); see %s", what, p.name, lastErr, p.logPath), ctx.Err())
		case <-tick.C:
		}
	}
}
