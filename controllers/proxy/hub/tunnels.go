package hub

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/hubtunnel"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
)

// +kubebuilder:rbac:groups=cluster.open-cluster-management.io,resources=managedclusters,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=serviceaccounts,verbs=get

// tunnel is one attached tunnel: whose it is, who attached it and until
// when it may stay.
type tunnel struct {
	cluster string
	agent   *caller
	expires time.Time
	rec     *hijackRecorder
	log     logr.Logger
}

// newTunnel records the tunnel c attaches for cluster through w.
func (s *Server) newTunnel(cluster string, c *caller, w http.ResponseWriter, log logr.Logger) *tunnel {
	lifetime := s.limits.Lifetime + time.Duration(rand.Int64N(int64(s.limits.Lifetime/10)+1))
	t := &tunnel{cluster: cluster, agent: c, expires: time.Now().Add(lifetime), log: log}
	t.rec = &hijackRecorder{ResponseWriter: w, broke: func(err error) {
		log.Info("Closed a tunnel whose agent broke its limits", "reason", err.Error())
	}, conns: tunnelBuffers{b: s.buffers, cluster: cluster}}
	return t
}

// revoke closes t, saying why.
func (t *tunnel) revoke(reason string) {
	t.log.Info("Closing the tunnel", "reason", reason)
	t.rec.close()
}

// refused says why cluster may not have a tunnel now, or "" when it may:
// the hub must accept it, and it must not be being deleted.
func (s *Server) refused(ctx context.Context, cluster string) (string, error) {
	if s.clusters == nil {
		return "", nil
	}
	mc := &clusterv1.ManagedCluster{}
	if err := s.clusters.Get(ctx, client.ObjectKey{Name: cluster}, mc); err != nil {
		if apierrors.IsNotFound(err) {
			return "the hub has no ManagedCluster " + cluster, nil
		}
		return "", fmt.Errorf("read ManagedCluster %s: %w", cluster, err)
	}
	return clusterRefusal(mc), nil
}

// clusterRefusal says why mc may not have a tunnel, or "".
func clusterRefusal(mc *clusterv1.ManagedCluster) string {
	switch {
	case mc.DeletionTimestamp != nil:
		return "ManagedCluster " + mc.Name + " is being deleted"
	case !mc.Spec.HubAcceptsClient:
		return "the hub does not accept it (spec.hubAcceptsClient is false)"
	}
	return ""
}

// watchClusters closes a cluster's tunnel as soon as the hub denies the
// cluster or its deletion starts.
func (s *Server) watchClusters(ctx context.Context) error {
	if s.clusters == nil {
		return nil
	}
	inf, err := s.clusters.GetInformer(ctx, &clusterv1.ManagedCluster{})
	if err != nil {
		return fmt.Errorf("watch ManagedClusters for the hub tunnel: %w", err)
	}
	check := func(obj any) {
		mc, ok := obj.(*clusterv1.ManagedCluster)
		if !ok {
			return
		}
		if reason := clusterRefusal(mc); reason != "" {
			s.revoke(mc.Name, reason)
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, obj any) { check(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if mc, ok := obj.(*clusterv1.ManagedCluster); ok {
				s.revoke(mc.Name, "ManagedCluster "+mc.Name+" was deleted")
			}
		},
	})
	if err != nil {
		return fmt.Errorf("watch ManagedClusters for the hub tunnel: %w", err)
	}
	return nil
}

// revoke closes cluster's tunnel if it ends here.
func (s *Server) revoke(cluster, reason string) {
	s.mu.Lock()
	t := s.attachedTunnels[cluster]
	s.mu.Unlock()
	if t != nil {
		t.revoke(reason)
	}
}

// reauthorize checks every attached tunnel again: its lifetime, its
// cluster, its agent's permission to attach it (asked anew, not from the
// decision cache), and for a ServiceAccount agent that the ServiceAccount
// it authenticated as still exists.
func (s *Server) reauthorize(ctx context.Context) {
	s.mu.Lock()
	tunnels := make([]*tunnel, 0, len(s.attachedTunnels))
	for _, t := range s.attachedTunnels {
		tunnels = append(tunnels, t)
	}
	s.mu.Unlock()
	for _, t := range tunnels {
		if ctx.Err() != nil {
			return
		}
		reason, err := s.stillAuthorized(ctx, t)
		if err != nil {
			t.log.Info("Could not authorize the tunnel again; it stays until the next check", "error", err.Error())
			continue
		}
		if reason != "" {
			t.revoke(reason)
		}
	}
}

// stillAuthorized says why t may no longer stay attached, or "".
func (s *Server) stillAuthorized(ctx context.Context, t *tunnel) (string, error) {
	if time.Now().After(t.expires) {
		return "its lifetime ended; the agent attaches again with the credential it holds now", nil
	}
	if reason, err := s.refused(ctx, t.cluster); err != nil || reason != "" {
		return reason, err
	}
	ok, why, err := s.review.ask(ctx, t.agent, "get", hubtunnel.AttachSubresource, t.cluster)
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("%s may no longer get managedclusters/attach %s: %s", t.agent.user, t.cluster, why), nil
	}
	if ns, name, isSA := identity.ParseServiceAccountUserName(t.agent.user); isSA && t.agent.uid != "" {
		sa := &corev1.ServiceAccount{}
		if err := s.reader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, sa); err != nil {
			if apierrors.IsNotFound(err) {
				return "ServiceAccount " + ns + "/" + name + " it authenticated as was deleted", nil
			}
			return "", fmt.Errorf("read ServiceAccount %s/%s: %w", ns, name, err)
		}
		if string(sa.UID) != t.agent.uid {
			return "ServiceAccount " + ns + "/" + name + " it authenticated as was deleted and created again", nil
		}
	}
	return "", nil
}
