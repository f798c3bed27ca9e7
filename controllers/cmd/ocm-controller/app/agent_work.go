package app

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// Flags of the work agent that the Klusterlet's spec.workConfiguration may
// also set.
const (
	flagEvictionGracePeriod = "appliedmanifestwork-eviction-grace-period"
	flagStatusSyncInterval  = "status-sync-interval"
	flagHubQPS              = "hub-kube-api-qps"
	flagHubBurst            = "hub-kube-api-burst"
)

// klusterletReadTimeout bounds the read of the Klusterlet at start-up.
const klusterletReadTimeout = 30 * time.Second

// workConfigFromKlusterlet fills the work agent options that were not given
// as flags from the Klusterlet's spec.workConfiguration, as OCM's operator
// passes them to its work agent. A missing Klusterlet leaves the flags'
// defaults.
func (o *agentOptions) workConfigFromKlusterlet(ctx context.Context, r client.Reader, opts *workagent.Options) error {
	ctx, cancel := context.WithTimeout(ctx, klusterletReadTimeout)
	defer cancel()
	k := &operatorv1.Klusterlet{}
	err := r.Get(ctx, types.NamespacedName{Name: o.registration.KlusterletName}, k)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("read Klusterlet %s for the work agent's configuration: %w", o.registration.KlusterletName, err)
	}
	applyWorkConfiguration(k.Spec.WorkConfiguration, o.workFlagsSet, opts)
	ctrl.Log.WithName("agent").V(1).Info("Work agent configuration", "hubQPS", opts.HubQPS, "hubBurst", opts.HubBurst,
		"evictionGracePeriod", opts.EvictionGracePeriod, "statusSyncInterval", opts.StatusSyncInterval)
	return nil
}

// applyWorkConfiguration sets the options of wc's non-zero fields whose flag
// is not in flagsSet.
func applyWorkConfiguration(wc *operatorv1.WorkAgentConfiguration, flagsSet map[string]bool, opts *workagent.Options) {
	if wc == nil {
		return
	}
	if wc.HubKubeAPIQPS > 0 && !flagsSet[flagHubQPS] {
		opts.HubQPS = float32(wc.HubKubeAPIQPS)
	}
	if wc.HubKubeAPIBurst > 0 && !flagsSet[flagHubBurst] {
		opts.HubBurst = int(wc.HubKubeAPIBurst)
	}
	if d := wc.AppliedManifestWorkEvictionGracePeriod; d != nil && d.Duration > 0 && !flagsSet[flagEvictionGracePeriod] {
		opts.EvictionGracePeriod = d.Duration
	}
	if d := wc.StatusSyncInterval; d != nil && d.Duration > 0 && !flagsSet[flagStatusSyncInterval] {
		opts.StatusSyncInterval = d.Duration
	}
}
