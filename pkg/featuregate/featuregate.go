// Package featuregate is the one list of the feature gates the ClusterManager
// and the Klusterlet may set, and the one translation between their
// spec.*Configuration.featureGates and the --feature-gates flag of
// ocm-controller. The operator renders the flag; the controllers parse it.
package featuregate

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

// Hub feature gates (the ClusterManager's registrationConfiguration,
// workConfiguration, addOnManagerConfiguration and placementConfiguration).
const (
	// DefaultClusterSet keeps the ManagedClusterSets default and global.
	DefaultClusterSet = "DefaultClusterSet"
	// ManagedClusterAutoApproval approves the CSRs and accepts the clusters
	// of the autoApproveUsers.
	ManagedClusterAutoApproval = "ManagedClusterAutoApproval"
	// ClusterProfile exports ManagedClusters as ClusterProfiles.
	ClusterProfile = "ClusterProfile"
	// ManifestWorkReplicaSet runs the ManifestWorkReplicaSet controller.
	ManifestWorkReplicaSet = "ManifestWorkReplicaSet"
	// SIGPlacementDecision mirrors every PlacementDecision of the placement
	// scheduler into a PlacementDecision of the SIG-Multicluster API
	// (multicluster.x-k8s.io/v1alpha1, KEP-5313).
	SIGPlacementDecision = "SIGPlacementDecision"
	// AddonManagement runs the add-on manager on the hub, and the add-on
	// agent (registration and health of add-ons) on managed clusters.
	AddonManagement = "AddonManagement"
	// ClusterImporter runs the cluster importer (`ocm-controller importer`,
	// its own Deployment and ServiceAccount), which installs the Klusterlet
	// on clusters whose namespace holds an import Secret.
	ClusterImporter = "ClusterImporter"
)

// Agent feature gates (the Klusterlet's registrationConfiguration and
// workConfiguration).
const (
	// ClusterClaim reports ClusterClaims in the ManagedCluster's status.
	ClusterClaim = "ClusterClaim"
	// MultipleHubs lets the Klusterlet name two or more hubs
	// (bootstrapKubeConfigs of type LocalSecrets), which the agent moves
	// between when the current one is lost.
	MultipleHubs = "MultipleHubs"
	// ManifestWorkApplyLatency makes the work agent log a record of each
	// ManifestWork generation's apply (flows mw_spoke_apply,
	// mw_resource_spoke_apply, mw_resource_spoke_sync and
	// mw_spoke_apply_result) and count the apply outcomes in the metrics
	// work_manifestwork_apply_total and work_manifestwork_resource_apply_total,
	// to measure how long ManifestWorks take to reach the cluster.
	ManifestWorkApplyLatency = "ManifestWorkApplyLatency"
	// HubTunnel keeps a tunnel attached at the hub through which hub users
	// reach the cluster's API server as ocm:hub:<user> (the agent's
	// impersonation rights come with it).
	HubTunnel = "HubTunnel"
)

// Gate is one feature gate a component knows.
type Gate struct {
	// Name is the feature's name, as in spec.*.featureGates[].feature.
	Name string
	// Default is whether the feature is on when no gate names it.
	Default bool
	// Description says what the feature does.
	Description string
}

// Hub lists the gates of `ocm-controller hub`.
var Hub = []Gate{
	{Name: AddonManagement, Default: true, Description: "the add-on manager"},
	{Name: ClusterImporter, Default: false, Description: "the cluster importer, which installs the Klusterlet on clusters whose namespace holds an import Secret"},
	{Name: ClusterProfile, Default: true, Description: "ClusterProfiles in the namespaces bound to a cluster's sets"},
	{Name: DefaultClusterSet, Default: true, Description: "the ManagedClusterSets default and global"},
	{Name: ManagedClusterAutoApproval, Default: true, Description: "automatic approval for the ClusterManager's autoApproveUsers"},
	{Name: ManifestWorkReplicaSet, Default: true, Description: "the ManifestWorkReplicaSet controller"},
	{Name: SIGPlacementDecision, Default: false, Description: "every PlacementDecision mirrored as a multicluster.x-k8s.io PlacementDecision of KEP-5313"},
}

// Agent lists the gates of `ocm-controller agent`.
var Agent = []Gate{
	{Name: AddonManagement, Default: true, Description: "add-on registration and health"},
	{Name: ClusterClaim, Default: true, Description: "ClusterClaims in the ManagedCluster's status"},
	{Name: HubTunnel, Default: true, Description: "the tunnel through which hub users reach this cluster's API server as ocm:hub:<user>, and the agent's right to impersonate them"},
	{Name: ManifestWorkApplyLatency, Default: false, Description: "records of each ManifestWork generation's apply in the work agent's log, and the apply outcome metrics work_manifestwork_apply_total and work_manifestwork_resource_apply_total"},
	{Name: MultipleHubs, Default: true, Description: "standby hubs: two or more bootstrap kubeconfigs, the agent moving to the next hub when the current one is lost"},
}

// Set says which features of one component are on.
type Set struct {
	known   []Gate
	enabled map[string]bool
}

// Defaults returns the set of known with every gate at its default.
func Defaults(known []Gate) Set {
	s := Set{known: known, enabled: map[string]bool{}}
	for _, g := range known {
		s.enabled[g.Name] = g.Default
	}
	return s
}

// Enabled reports whether feature is on; an unknown feature is off.
func (s Set) Enabled(feature string) bool { return s.enabled[feature] }

// FromSpec resolves the featureGates of one or more spec sections (the last
// mention of a feature wins) against known. It returns the features it does
// not know, which the resources' API says are ignored, for the caller to
// report.
func FromSpec(known []Gate, sections ...[]operatorv1.FeatureGate) (Set, []string) {
	s := Defaults(known)
	var unknown []string
	for _, gates := range sections {
		for _, g := range gates {
			if _, ok := s.enabled[g.Feature]; !ok {
				if !slices.Contains(unknown, g.Feature) {
					unknown = append(unknown, g.Feature)
				}
				continue
			}
			s.enabled[g.Feature] = g.Mode == operatorv1.FeatureGateModeTypeEnable
		}
	}
	sort.Strings(unknown)
	return s, unknown
}

// Flag renders the set as the value of --feature-gates: the features that
// differ from their defaults, sorted, as Name=true|false. It is empty when
// every feature is at its default, so that a default install renders no
// flag.
func (s Set) Flag() string {
	var parts []string
	for _, g := range s.known {
		if on := s.enabled[g.Name]; on != g.Default {
			parts = append(parts, g.Name+"="+strconv.FormatBool(on))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// Parse reads a --feature-gates value (Name=true|false, comma separated)
// against known. An unknown feature or a value other than true or false is
// an error naming the known features.
func Parse(known []Gate, flag string) (Set, error) {
	s := Defaults(known)
	for _, part := range strings.Split(flag, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			return s, fmt.Errorf("feature gate %q is not Name=true|false", part)
		}
		name = strings.TrimSpace(name)
		if _, ok := s.enabled[name]; !ok {
			return s, fmt.Errorf("unknown feature gate %q; known: %s", name, strings.Join(Names(known), ", "))
		}
		on, err := strconv.ParseBool(strings.TrimSpace(val))
		if err != nil {
			return s, fmt.Errorf("feature gate %s=%s: the value must be true or false", name, val)
		}
		s.enabled[name] = on
	}
	return s, nil
}

// Names returns the names of known, sorted.
func Names(known []Gate) []string {
	out := make([]string, 0, len(known))
	for _, g := range known {
		out = append(out, g.Name)
	}
	sort.Strings(out)
	return out
}

// Usage describes the gates of known for a flag's help text.
func Usage(known []Gate) string {
	var b strings.Builder
	b.WriteString("Features to turn on or off, as Name=true|false,... Known:")
	for _, g := range known {
		fmt.Fprintf(&b, " %s (%s; default %t);", g.Name, g.Description, g.Default)
	}
	return strings.TrimSuffix(b.String(), ";") + "."
}
