package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/leaderelect"
)

// leaderElectionSpec returns a spec.leaderElection with the given timings,
// zero ones unset.
func leaderElectionSpec(lease, renew, retry time.Duration) *operatorv1.LeaderElectionConfiguration {
	d := func(v time.Duration) *metav1.Duration {
		if v == 0 {
			return nil
		}
		return &metav1.Duration{Duration: v}
	}
	return &operatorv1.LeaderElectionConfiguration{LeaseDuration: d(lease), RenewDeadline: d(renew), RetryPeriod: d(retry)}
}

// TestLeaderElectionFromResources checks that the ClusterManager's and the
// Klusterlet's spec.leaderElection become the flags of the Deployments the
// operators render, that unset fields render no flag, and that a
// combination the leader elector refuses, counting the defaults of unset
// fields, is a FieldError with reason LeaderElectionInvalid naming the
// field.
func TestLeaderElectionFromResources(t *testing.T) {
	for _, tt := range []struct {
		name string
		// le is the field, for the resource's defaults d.
		le        func(d leaderelect.Timings) *operatorv1.LeaderElectionConfiguration
		wantArgs  func(d leaderelect.Timings) []string
		wantField string
	}{
		{name: "unset", le: func(leaderelect.Timings) *operatorv1.LeaderElectionConfiguration { return nil }},
		{name: "empty", le: func(leaderelect.Timings) *operatorv1.LeaderElectionConfiguration {
			return &operatorv1.LeaderElectionConfiguration{}
		}},
		{name: "all three", le: func(leaderelect.Timings) *operatorv1.LeaderElectionConfiguration {
			return leaderElectionSpec(2*time.Minute, 90*time.Second, 10*time.Second)
		}, wantArgs: func(leaderelect.Timings) []string {
			return []string{"--leader-elect-lease-duration=2m0s", "--leader-elect-renew-deadline=1m30s", "--leader-elect-retry-period=10s"}
		}},
		{name: "short, as the failover tests set them", le: func(leaderelect.Timings) *operatorv1.LeaderElectionConfiguration {
			return leaderElectionSpec(6*time.Second, 4*time.Second, time.Second)
		}, wantArgs: func(leaderelect.Timings) []string {
			return []string{"--leader-elect-lease-duration=6s", "--leader-elect-renew-deadline=4s", "--leader-elect-retry-period=1s"}
		}},
		{name: "lease only, longer than the default renew deadline", le: func(d leaderelect.Timings) *operatorv1.LeaderElectionConfiguration {
			return leaderElectionSpec(d.RenewDeadline+time.Second, 0, 0)
		}, wantArgs: func(d leaderelect.Timings) []string {
			return []string{"--leader-elect-lease-duration=" + (d.RenewDeadline + time.Second).String()}
		}},
		{name: "renew deadline beyond the default lease", le: func(d leaderelect.Timings) *operatorv1.LeaderElectionConfiguration {
			return leaderElectionSpec(0, d.LeaseDuration+time.Second, 0)
		}, wantField: "spec.leaderElection.leaseDuration"},
		{name: "lease within the default renew deadline", le: func(d leaderelect.Timings) *operatorv1.LeaderElectionConfiguration {
			return leaderElectionSpec(d.RenewDeadline, 0, 0)
		}, wantField: "spec.leaderElection.leaseDuration"},
		{name: "retry period within the default renew deadline's jitter", le: func(d leaderelect.Timings) *operatorv1.LeaderElectionConfiguration {
			return leaderElectionSpec(0, 0, d.RenewDeadline)
		}, wantField: "spec.leaderElection.renewDeadline"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cm := &operatorv1.ClusterManager{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Spec: operatorv1.ClusterManagerSpec{LeaderElection: tt.le(leaderelect.Hub)}}
			hv, _, hubErr := HubValuesFromClusterManager(cm)
			k := klusterlet(func(s *operatorv1.KlusterletSpec) { s.LeaderElection = tt.le(leaderelect.Managed) })
			av, _, agentErr := AgentValuesFromKlusterlet(k, []byte("kubeconfig"))
			if tt.wantField != "" {
				for what, err := range map[string]error{"ClusterManager": hubErr, "Klusterlet": agentErr} {
					var fe *FieldError
					if !errors.As(err, &fe) || fe.Reason != ReasonLeaderElectionInvalid || !strings.HasPrefix(fe.Message, tt.wantField+" ") {
						t.Errorf("%s: err = %v, want reason %s naming %s", what, err, ReasonLeaderElectionInvalid, tt.wantField)
					}
				}
				return
			}
			if hubErr != nil || agentErr != nil {
				t.Fatalf("errors: %v, %v", hubErr, agentErr)
			}
			for what, c := range map[string]struct {
				args     string
				defaults leaderelect.Timings
			}{"hub controller": {hubControllerArgs(t, hv), leaderelect.Hub}, "agent": {agentArgs(t, av), leaderelect.Managed}} {
				if tt.wantArgs == nil {
					if strings.Contains(c.args, "--leader-elect-") {
						t.Errorf("%s: timings rendered though none is set: %q", what, c.args)
					}
					continue
				}
				for _, a := range tt.wantArgs(c.defaults) {
					if !strings.Contains(c.args, a) {
						t.Errorf("%s args %q lack %q", what, c.args, a)
					}
				}
			}
		})
	}
}

// hubControllerArgs renders v and returns the hub controller's args,
// space-joined.
func hubControllerArgs(t *testing.T, v HubValues) string {
	t.Helper()
	objs, err := HubObjects(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, obj := range objs {
		if obj.GetKind() == "Deployment" && obj.GetName() == HubControllerDeployment {
			return containerArgs(obj)
		}
	}
	t.Fatal("no hub controller Deployment rendered")
	return ""
}

// containerArgs returns the first container's args of Deployment obj,
// space-joined.
func containerArgs(obj *unstructured.Unstructured) string {
	ctrs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(ctrs[0].(map[string]any), "args")
	return strings.Join(args, " ")
}

// TestInstallLeaderElection checks what `hub init` and `join` write from
// their flags: the operators' own Deployments get their timings as flags,
// and the ClusterManager and Klusterlet carry the hub controller's and the
// agent's in spec.leaderElection, which reads back as the same timings.
func TestInstallLeaderElection(t *testing.T) {
	op := LeaderElection{leaderelect.Timings{LeaseDuration: 90 * time.Second, RenewDeadline: time.Minute}}
	comp := LeaderElection{leaderelect.Timings{LeaseDuration: 6 * time.Second, RenewDeadline: 4 * time.Second, RetryPeriod: 500 * time.Millisecond}}
	hubObjs, err := HubOperatorObjects(HubOperatorValues{LeaderElection: op, HubLeaderElection: comp})
	if err != nil {
		t.Fatal(err)
	}
	agentObjs, _, err := KlusterletInstallObjects(KlusterletOperatorValues{LeaderElection: op},
		AgentValues{ClusterName: "cluster1", BootstrapKubeconfig: []byte("kubeconfig"), LeaderElection: comp,
			ManifestWorkWorkers: 3, AppliedWorkWorkers: 4}, false)
	if err != nil {
		t.Fatal(err)
	}
	wantOp := "--leader-elect-lease-duration=1m30s --leader-elect-renew-deadline=1m0s"
	var deployments int
	for _, obj := range append(hubObjs, agentObjs...) {
		switch obj.GetKind() {
		case "Deployment":
			deployments++
			if args := containerArgs(obj); !strings.Contains(args, wantOp) || strings.Contains(args, "--leader-elect-retry-period") {
				t.Errorf("Deployment %s args %q: want %q and no retry period", obj.GetName(), args, wantOp)
			}
		case "ClusterManager":
			var cm operatorv1.ClusterManager
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, &cm, true); err != nil {
				t.Fatal(err)
			}
			v, _, err := HubValuesFromClusterManager(&cm)
			if err != nil || !reflect.DeepEqual(v.LeaderElection, comp) {
				t.Errorf("ClusterManager spec.leaderElection %+v read back as %+v (%v), want %+v", cm.Spec.LeaderElection, v.LeaderElection, err, comp)
			}
		case "Klusterlet":
			var k operatorv1.Klusterlet
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(obj.Object, &k, true); err != nil {
				t.Fatal(err)
			}
			v, _, err := AgentValuesFromKlusterlet(&k, nil)
			if err != nil || !reflect.DeepEqual(v.LeaderElection, comp) || v.ManifestWorkWorkers != 3 || v.AppliedWorkWorkers != 4 {
				t.Errorf("Klusterlet read back as leader election %+v, workers %d/%d (%v); want %+v, 3/4", v.LeaderElection, v.ManifestWorkWorkers, v.AppliedWorkWorkers, err, comp)
			}
		}
	}
	if deployments != 2 {
		t.Errorf("%d operator Deployments, want 2", deployments)
	}
}
