package conversion

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
)

// The migration reads the converted CRDs, rewrites every object of theirs
// and sets their status.storedVersions; its probe is a dry-run create of a
// ClusterManagementAddOn.
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions/status,verbs=update,resourceNames=addondeploymentconfigs.addon.open-cluster-management.io;addontemplates.addon.open-cluster-management.io;clustermanagementaddons.addon.open-cluster-management.io;managedclusteraddons.addon.open-cluster-management.io
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=addondeploymentconfigs;addontemplates;clustermanagementaddons;managedclusteraddons,verbs=list;update
// +kubebuilder:rbac:groups=addon.open-cluster-management.io,resources=clustermanagementaddons,verbs=create

// Migrator brings the add-on objects an earlier version of the hub stored at
// v1alpha1 to the storage version, once the API server converts through the
// webhook: what `kubectl ocm hub init` does after an upgrade, so that a hub
// upgraded by applying its manifests (kubectl apply, a GitOps tool) needs
// nothing more. It runs on the leader only.
type Migrator struct {
	// Client reads the CRDs and rewrites the objects, uncached.
	Client client.Client
	// Resync is the time between two checks when nothing is pending.
	// Default: DefaultResync.
	Resync time.Duration
	// Log receives what was migrated.
	Log logr.Logger
}

// NewMigrator returns a Migrator for mgr that reads and writes with a client
// of its own, bypassing the manager's cache (which need not hold CRDs).
func NewMigrator(mgr manager.Manager, log logr.Logger) (*Migrator, error) {
	c, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("client of the stored-version migration: %w", err)
	}
	return &Migrator{Client: c, Log: log}, nil
}

// NeedLeaderElection is true: one replica migrates.
func (m *Migrator) NeedLeaderElection() bool { return true }

// Start checks, until ctx ends, whether a migration is pending and runs it:
// every Resync, and every few seconds while the webhook does not answer yet
// or a migration failed.
func (m *Migrator) Start(ctx context.Context) error {
	resync := m.Resync
	if resync <= 0 {
		resync = DefaultResync
	}
	repeat(ctx, func(ctx context.Context) time.Duration {
		pending, err := m.Sync(ctx)
		if err != nil {
			m.Log.Error(err, "Migrating stored add-on objects")
		}
		if pending || err != nil {
			return retryInterval
		}
		return resync
	})
	return nil
}

// Sync migrates once, when a converted CRD may store objects at another
// version and the API server converts through the webhook. It reports
// whether a migration is still pending.
func (m *Migrator) Sync(ctx context.Context) (pending bool, err error) {
	pending, err = conversion.MigrationPending(ctx, m.Client)
	if err != nil || !pending {
		return pending, err
	}
	if err := conversion.Probe(ctx, m.Client); err != nil {
		m.Log.V(1).Info("Waiting for the conversion webhook before migrating stored add-on objects", "reason", err.Error())
		return true, nil
	}
	migrated, err := conversion.MigrateStoredVersions(ctx, m.Client)
	for _, mg := range migrated {
		m.Log.Info("Migrated stored add-on objects", "crd", mg.CRD, "objects", mg.Objects, "from", mg.From, "to", mg.To)
	}
	if err != nil {
		return true, err
	}
	return false, nil
}
