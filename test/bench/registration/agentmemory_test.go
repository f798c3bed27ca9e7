package registration

import (
	"testing"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/test/bench/internal/benchkit"
)

// agentSideTarget is the target to read the agent side's memory by.
const agentSideTarget = "target ≤ 60 MB for the agent side (Klusterlet operator + agent)"

// BenchmarkAgentSideMemory joins cluster1 through the Klusterlet operator, as
// `kubectl ocm join` installs it, and reads the resident memory (VmRSS) of the
// operator and of the agent it installed once the cluster is Available and
// again after the -settle period.
func BenchmarkAgentSideMemory(b *testing.B) {
	f := benchkit.StartFleet(b, config.HubOperatorValues{}, "cluster1")
	ctx := b.Context()
	benchkit.JoinClusterWithOperator(ctx, b, f, "cluster1")
	read := func(when string) (op, agent uint64) {
		for _, p := range []struct {
			namespace, name string
			into            *uint64
		}{
			{operatorv1.OperatorNamespace, config.KlusterletOperatorName, &op},
			{config.AgentNamespace, config.AgentDeployment, &agent},
		} {
			m, err := benchkit.ReadProcMemory(f.Pid("cluster1", p.namespace, p.name))
			if err != nil {
				b.Fatalf("read the memory of Deployment %s/%s: %v", p.namespace, p.name, err)
			}
			*p.into = m.RSS
		}
		benchkit.Record(b, "Klusterlet operator RSS, "+when, benchkit.MiB(op), "")
		benchkit.Record(b, "agent RSS, "+when, benchkit.MiB(agent), "")
		return op, agent
	}
	read("cluster joined")
	settle(ctx, b)
	op, agent := read("after " + settlePeriod.String() + " settle")
	benchkit.Record(b, "agent side (operator + agent) RSS, settled", benchkit.MiB(op+agent), agentSideTarget)
	b.ReportMetric(float64(op)/(1<<20), "operator-rss-MiB")
	b.ReportMetric(float64(op+agent)/(1<<20), "agent-side-rss-MiB")
	b.ReportMetric(0, "ns/op")
}
