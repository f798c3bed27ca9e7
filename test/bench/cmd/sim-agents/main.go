// Command sim-agents runs thousands of simulated cluster agents against a
// hub, sharing one connection (see test/bench/internal/simfleet), as a
// process of its own: the scale harness starts it so that the hub's figures
// are the hub's and the agents' CPU and memory are reported apart, and it
// can run on a second machine against any hub.
//
// It registers --clusters clusters at start, then reads commands, one per
// line, on its standard input and answers each on one line of its standard
// output:
//
//	register PREFIX FIRST LAST   registers PREFIX%05d for FIRST..LAST; answers "ok N SECONDS" or "error MESSAGE"
//	counters                     answers "counters JSON"
//	lease-latency                answers "lease-latency JSON": how long the
//	                             agents' lease renewals took since the last
//	                             lease-latency (count, p50Ms, p99Ms, maxMs)
//
// At the end of its input (or, with --until-signal, at SIGINT or SIGTERM)
// it stops its agents and prints its counters on standard error.
//
// The identity of --hub-kubeconfig must be allowed to impersonate users and
// groups (verb impersonate on users and groups), and the ClusterManager
// must list --bootstrap-user in its autoApproveUsers; the hub's RBAC then
// authorizes each agent's requests as that cluster's agent.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/tools/clientcmd"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/simfleet"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "sim-agents:", err)
		os.Exit(1)
	}
}

func run() error {
	// The agents' failures are counted (the counters printed at the end);
	// controller-runtime's own log would only warn that it has no logger.
	ctrllog.SetLogger(logr.Discard())
	kubeconfig := flag.String("hub-kubeconfig", "", "Kubeconfig of the hub, with an identity that may impersonate users and groups (required).")
	opts := simfleet.Options{}
	flag.StringVar(&opts.BootstrapUser, "bootstrap-user", benchkit.SimBootstrapUser, "User the agents register as; list it in the ClusterManager's autoApproveUsers.")
	flag.BoolVar(&opts.ServeWorks, "serve-works", true, "Acknowledge every ManifestWork of the agents' cluster namespaces as applied and available.")
	flag.IntVar(&opts.Concurrency, "concurrency", 64, "Registrations running at once.")
	flag.IntVar(&opts.WorkWorkers, "work-workers", 64, "Work status writes in flight at once over all agents.")
	agentQPS := flag.Float64("agent-qps", 5, "Client-side requests per second of each agent.")
	flag.IntVar(&opts.AgentBurst, "agent-burst", 10, "Client-side burst of each agent.")
	flag.DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "Upper bound of one cluster's registration.")
	hubQPS := flag.Float64("hub-qps", 200, "Client-side requests per second of the shared identity (acceptance, informers).")
	clusters := flag.Int("clusters", 0, "Clusters to register at start, named --prefix%05d from 1.")
	prefix := flag.String("prefix", "sim-", "Name prefix of the clusters of --clusters.")
	untilSignal := flag.Bool("until-signal", false, "Run until SIGINT or SIGTERM instead of the end of standard input.")
	flag.Parse()
	if *kubeconfig == "" {
		return fmt.Errorf("--hub-kubeconfig is required")
	}
	opts.AgentQPS = float32(*agentQPS)
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("read --hub-kubeconfig: %w", err)
	}
	cfg.QPS, cfg.Burst = float32(*hubQPS), int(2**hubQPS)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	runCtx, cancel := context.WithCancel(ctx)
	f, err := simfleet.New(runCtx, cfg, opts)
	if err != nil {
		cancel()
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	answer := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	if *clusters > 0 {
		answer("%s", register(ctx, f, *prefix, 1, *clusters))
	}
	if *untilSignal {
		<-ctx.Done()
	} else {
		serve(runCtx, cancel, f, os.Stdin, answer)
	}
	cancel()
	f.Wait()
	data, _ := json.Marshal(f.Counters())
	fmt.Fprintf(os.Stderr, "sim-agents: counters %s\n", data)
	return nil
}

// serve answers the commands of in until its end or ctx's. The end of in
// (the harness that drives it gone) also cancels a registration under way,
// through stop, so that the agents do not outlive their harness.
func serve(ctx context.Context, stop context.CancelFunc, f *simfleet.Fleet, in io.Reader, answer func(string, ...any)) {
	commands := make(chan string)
	go func() {
		defer close(commands)
		lines := bufio.NewScanner(in)
		for lines.Scan() {
			select {
			case commands <- lines.Text():
			case <-ctx.Done():
				return
			}
		}
		stop()
	}()
	for line := range commands {
		if ctx.Err() != nil {
			return
		}
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case fields[0] == "register" && len(fields) == 4:
			first, err1 := strconv.Atoi(fields[2])
			last, err2 := strconv.Atoi(fields[3])
			if err1 != nil || err2 != nil || first < 1 || last < first {
				answer("error register wants PREFIX FIRST LAST with 1 <= FIRST <= LAST, got %q", line)
				continue
			}
			answer("%s", register(ctx, f, fields[1], first, last))
		case fields[0] == "counters":
			data, _ := json.Marshal(f.Counters())
			answer("counters %s", data)
		case fields[0] == "lease-latency":
			data, _ := json.Marshal(f.TakeLeaseLatency())
			answer("lease-latency %s", data)
		default:
			answer("error unknown command %q: want \"register PREFIX FIRST LAST\", \"counters\" or \"lease-latency\"", line)
		}
	}
}

// register registers prefix%05d for first..last and returns the answer.
func register(ctx context.Context, f *simfleet.Fleet, prefix string, first, last int) string {
	names := make([]string, 0, last-first+1)
	for i := first; i <= last; i++ {
		names = append(names, fmt.Sprintf("%s%05d", prefix, i))
	}
	start := time.Now()
	if err := f.Register(ctx, names); err != nil {
		return "error " + strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return fmt.Sprintf("ok %d %.3f", len(names), time.Since(start).Seconds())
}
