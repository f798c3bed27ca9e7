package hub

import (
	"context"
	"fmt"
	"io"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/deploystatus"
	"github.com/kubectl-ocm/kubectl-ocm/plugins/cli"
)

// Status is what `hub status` reports.
type Status struct {
	// Operator describes the ClusterManager operator Deployment.
	Operator ControllerStatus `json:"operator"`
	// Controller describes the hub controller Deployment.
	Controller ControllerStatus `json:"controller"`
	// Conditions are the ClusterManager's conditions, which its operator
	// computes from what runs (Applied, Available, Progressing,
	// HubRegistrationDegraded, HubPlacementDegraded) and the hub controller
	// adds its version to (HubControllerVersion).
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Clusters counts the ManagedClusters.
	Clusters ClusterCounts `json:"clusters"`
	// CRDs are the hub CRDs, each with whether it is installed.
	CRDs map[string]bool `json:"crds"`
	// Conversion is the health of the add-on API's conversion webhook.
	Conversion *conversion.Health `json:"conversion,omitempty"`
}

// ControllerStatus describes the hub controller Deployment.
type ControllerStatus struct {
	// Installed reports whether the Deployment exists.
	Installed bool `json:"installed"`
	// Available reports whether it is available.
	Available bool `json:"available"`
	// State describes the rollout, the Deployment's failing conditions and
	// the Pod-level cause when it is not available.
	State string `json:"state,omitempty"`
}

// ClusterCounts counts ManagedClusters by state.
type ClusterCounts struct {
	Total     int `json:"total"`
	Accepted  int `json:"accepted"`
	Joined    int `json:"joined"`
	Available int `json:"available"`
}

// Run prints the hub's status.
func (o *StatusOptions) Run(ctx context.Context) error {
	c, cfg, err := cli.NewClient(ctx, o.getter)
	if err != nil {
		return err
	}
	st, err := collectStatus(ctx, c, cli.NewInspector(c, cfg, cli.HubImageFix))
	if err != nil {
		return fmt.Errorf("read hub status from %s: %w", cfg.Host, err)
	}
	if o.Output != "" {
		return cli.PrintData(o.Out, o.Output, st)
	}
	printStatus(o.Out, st)
	return nil
}

// collectStatus reads the hub's state, judging its Deployments with in.
func collectStatus(ctx context.Context, c client.Client, in *deploystatus.Inspector) (*Status, error) {
	st := &Status{CRDs: map[string]bool{}}
	var err error
	if st.Operator, err = readDeployment(ctx, in, operatorDeployment); err != nil {
		return nil, err
	}
	if st.Controller, err = readDeployment(ctx, in, controllerDeployment); err != nil {
		return nil, err
	}
	crds, err := config.HubCRDs()
	if err != nil {
		return nil, err
	}
	for _, crd := range crds {
		err := c.Get(ctx, client.ObjectKey{Name: crd.Name}, &apiextensionsv1.CustomResourceDefinition{})
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, err
		}
		st.CRDs[crd.Name] = err == nil
	}
	if !st.CRDs["managedclusters.cluster.open-cluster-management.io"] {
		return st, nil
	}
	if st.Conversion, err = conversion.Check(ctx, c, config.HubNamespace, time.Now()); err != nil {
		return nil, err
	}
	cm := &operatorv1.ClusterManager{}
	if err := c.Get(ctx, client.ObjectKey{Name: operatorv1.ClusterManagerName}, cm); client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	st.Conditions = cm.Status.Conditions
	clusters := &clusterv1.ManagedClusterList{}
	if err := c.List(ctx, clusters); err != nil {
		return nil, err
	}
	st.Clusters = countClusters(clusters.Items)
	return st, nil
}

// readDeployment describes Deployment key as in judges it: available
// once rolled out, else its state and the Pod-level cause with its fix.
func readDeployment(ctx context.Context, in *deploystatus.Inspector, key types.NamespacedName) (ControllerStatus, error) {
	r, err := in.Read(ctx, key)
	if err != nil || r == nil {
		return ControllerStatus{}, err
	}
	st := ControllerStatus{Installed: true, Available: r.Done, State: r.Status.String()}
	if r.Cause != nil {
		st.State += "; " + r.Cause.String()
	}
	return st, nil
}

// countClusters counts clusters by state.
func countClusters(items []clusterv1.ManagedCluster) ClusterCounts {
	n := ClusterCounts{Total: len(items)}
	for i := range items {
		mc := &items[i]
		if mc.IsAccepted() {
			n.Accepted++
		}
		if mc.IsJoined() {
			n.Joined++
		}
		if mc.AvailableStatus() == metav1.ConditionTrue {
			n.Available++
		}
	}
	return n
}

// printStatus writes the human-readable summary.
func printStatus(out io.Writer, st *Status) {
	fmt.Fprintf(out, "Operator:        %s\n", describeDeployment(st.Operator))
	fmt.Fprintf(out, "Hub controller:  %s\n", describeDeployment(st.Controller))
	for _, c := range st.Conditions {
		fmt.Fprintf(out, "ClusterManager:  %s=%s (%s) %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	fmt.Fprintf(out, "Clusters:        %d total, %d accepted, %d joined, %d available\n",
		st.Clusters.Total, st.Clusters.Accepted, st.Clusters.Joined, st.Clusters.Available)
	installed, missing := 0, []string{}
	for name, ok := range st.CRDs {
		if ok {
			installed++
		} else {
			missing = append(missing, name)
		}
	}
	fmt.Fprintf(out, "CRDs:            %d/%d installed\n", installed, len(st.CRDs))
	if len(missing) > 0 {
		fmt.Fprintf(out, "Missing CRDs:    %v (run `kubectl ocm hub init`)\n", missing)
	}
	if st.Conversion != nil {
		printConversion(out, st.Conversion)
	}
}

// describeDeployment says whether a Deployment is installed and available.
func describeDeployment(st ControllerStatus) string {
	if !st.Installed {
		return "not installed (run `kubectl ocm hub init`)"
	}
	return map[bool]string{true: "available", false: "not available"}[st.Available] + " (" + st.State + ")"
}

// printConversion writes the conversion webhook's health: one line when it
// works, then each problem with its cause and fix.
func printConversion(out io.Writer, h *conversion.Health) {
	current := 0
	for _, crd := range h.CRDs {
		if crd.CABundle == conversion.CABundleCurrent {
			current++
		}
	}
	state := map[bool]string{true: "working", false: "not working"}[len(h.Problems) == 0]
	reach := map[bool]string{true: "webhook reachable", false: "webhook not reachable"}[h.Reachable]
	line := fmt.Sprintf("%s (%s; CA bundle current on %d/%d CRDs", state, reach, current, len(h.CRDs))
	if h.ServingNotAfter != nil {
		line += "; serving certificate expires " + h.ServingNotAfter.UTC().Format(time.RFC3339)
	}
	if h.CANotAfter != nil {
		line += ", CA " + h.CANotAfter.UTC().Format(time.RFC3339)
	}
	fmt.Fprintf(out, "Conversion:      %s)\n", line)
	for _, p := range h.Problems {
		fmt.Fprintf(out, "  - %s\n", p)
	}
}
