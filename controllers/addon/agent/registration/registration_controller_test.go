package registration

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
)

// mca builds the ManagedClusterAddOn helloworld of c1 with regs.
func mca(driver string, regs ...addonv1alpha1.RegistrationConfig) *addonv1alpha1.ManagedClusterAddOn {
	return &addonv1alpha1.ManagedClusterAddOn{
		ObjectMeta: metav1.ObjectMeta{Namespace: "c1", Name: "helloworld"},
		Status:     addonv1alpha1.ManagedClusterAddOnStatus{Registrations: regs, KubeClientDriver: driver},
	}
}

var (
	kubeClient = addonv1alpha1.RegistrationConfig{SignerName: certificatesv1.KubeAPIServerClientSignerName}
	custom     = addonv1alpha1.RegistrationConfig{SignerName: "example.com/custom"}
)

func TestKubeClientRegistration(t *testing.T) {
	tests := []struct {
		name            string
		mca             *addonv1alpha1.ManagedClusterAddOn
		wantServed      bool
		wantUnsupported []string
	}{
		{"no registration", mca(""), false, nil},
		{"kube client", mca("", kubeClient), true, nil},
		{"csr driver", mca(addonv1alpha1.KubeClientDriverCSR, kubeClient), true, nil},
		{"custom signer only", mca("", custom), false, []string{"signer example.com/custom"}},
		{"kube client and custom signer", mca("", custom, kubeClient), true, []string{"signer example.com/custom"}},
		{"token driver", mca(addonv1alpha1.KubeClientDriverToken, kubeClient, kubeClient), true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, unsupported := kubeClientRegistration(tt.mca)
			if (reg != nil) != tt.wantServed || len(unsupported) != len(tt.wantUnsupported) {
				t.Fatalf("kubeClientRegistration = %v, %v; want served %v, unsupported %v", reg, unsupported, tt.wantServed, tt.wantUnsupported)
			}
			for i, want := range tt.wantUnsupported {
				if !strings.Contains(unsupported[i], want) {
					t.Errorf("unsupported[%d] = %q, want it to name %q", i, unsupported[i], want)
				}
			}
		})
	}
}

func TestRegistrationChanged(t *testing.T) {
	base := mca("", kubeClient)
	tests := []struct {
		name string
		edit func(*addonv1alpha1.ManagedClusterAddOn)
		want bool
	}{
		{"condition written", func(m *addonv1alpha1.ManagedClusterAddOn) {
			meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "R"})
		}, false},
		{"registration removed", func(m *addonv1alpha1.ManagedClusterAddOn) { m.Status.Registrations = nil }, true},
		{"subject changed", func(m *addonv1alpha1.ManagedClusterAddOn) { m.Status.Registrations[0].Subject.User = "u" }, true},
		{"install namespace moved", func(m *addonv1alpha1.ManagedClusterAddOn) { m.Status.Namespace = "elsewhere" }, true},
		{"driver changed", func(m *addonv1alpha1.ManagedClusterAddOn) {
			m.Status.KubeClientDriver = addonv1alpha1.KubeClientDriverToken
		}, true},
		{"deleted", func(m *addonv1alpha1.ManagedClusterAddOn) { m.DeletionTimestamp = &metav1.Time{Time: time.Now()} }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := base.DeepCopy()
			tt.edit(n)
			got := registrationChanged().Update(event.TypedUpdateEvent[*addonv1alpha1.ManagedClusterAddOn]{ObjectOld: base, ObjectNew: n})
			if got != tt.want {
				t.Errorf("registrationChanged = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPollAfter(t *testing.T) {
	r := &Reconciler{}
	var got []time.Duration
	for range 7 {
		got = append(got, r.pollAfter("csr-1"))
	}
	want := []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
	r.donePolling("csr-1")
	if d := r.pollAfter("csr-1"); d != firstPollInterval {
		t.Errorf("after donePolling the wait is %s, want %s", d, firstPollInterval)
	}
}

// secret builds a Secret, labeled for helloworld of c1 when ours.
func secret(ns, name string, ours bool) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{"k": []byte("v")}}
	if ours {
		s.Labels = map[string]string{clusterv1.ClusterNameLabelKey: "c1", addonv1alpha1.AddonLabelKey: "helloworld"}
	}
	return s
}

func TestReconcileWithoutKubeClientRegistration(t *testing.T) {
	tests := []struct {
		name        string
		mca         *addonv1alpha1.ManagedClusterAddOn
		wantSecrets []string
		wantReason  string
	}{
		{"ManagedClusterAddOn gone", nil, []string{"addon-ns/other", "ns2/helloworld-hub-kubeconfig"}, ""},
		{"registration removed", mca(""), []string{"addon-ns/other", "ns2/helloworld-hub-kubeconfig"}, ""},
		{"only a custom signer", mca("", custom), []string{"addon-ns/other", "ns2/helloworld-hub-kubeconfig"}, clusterv1.ReasonClientCertificateUpdateFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := []client.Object{
				secret("addon-ns", "helloworld-hub-kubeconfig", true),
				secret("old-ns", "helloworld-hub-kubeconfig", true),
				secret("agent", "helloworld-hub-kubeconfig-pending", true),
				secret("addon-ns", "other", false),
				secret("ns2", "helloworld-hub-kubeconfig", false),
			}
			hubObjs := []client.Object{}
			if tt.mca != nil {
				hubObjs = append(hubObjs, tt.mca)
			}
			spoke := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(objs...).Build()
			hub := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(hubObjs...).WithStatusSubresource(&addonv1alpha1.ManagedClusterAddOn{}).Build()
			r := &Reconciler{Hub: hub, Cluster: "c1", Managed: spoke, ManagedReader: spoke, Agent: spoke, AgentReader: spoke, Namespace: "agent"}
			ctx := ctrl.LoggerInto(context.Background(), ctrl.Log)
			if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "c1", Name: "helloworld"}}); err != nil {
				t.Fatal(err)
			}
			list := &corev1.SecretList{}
			if err := spoke.List(ctx, list); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range list.Items {
				got = append(got, s.Namespace+"/"+s.Name)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.wantSecrets) {
				t.Errorf("Secrets left = %v, want %v (the agent's own deleted, others kept)", got, tt.wantSecrets)
			}
			if tt.mca == nil {
				return
			}
			m := &addonv1alpha1.ManagedClusterAddOn{}
			if err := hub.Get(ctx, client.ObjectKeyFromObject(tt.mca), m); err != nil {
				t.Fatal(err)
			}
			c := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnCertificateRotated)
			if (c == nil) != (tt.wantReason == "") || (c != nil && (c.Reason != tt.wantReason || !strings.Contains(c.Message, "example.com/custom"))) {
				t.Errorf("ClusterCertificateRotated = %+v, want reason %q naming the signer", c, tt.wantReason)
			}
		})
	}
}

func TestReconcileLeavesForeignSecret(t *testing.T) {
	m := mca(addonv1alpha1.KubeClientDriverCSR, kubeClient)
	m.Status.Namespace = "ns2"
	spoke := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(secret("ns2", "helloworld-hub-kubeconfig", false)).Build()
	hub := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(m).WithStatusSubresource(m).Build()
	r := &Reconciler{Hub: hub, HubDirect: hub, Cluster: "c1", Managed: spoke, ManagedReader: spoke, Agent: spoke, AgentReader: spoke, Namespace: "agent"}
	ctx := context.Background()
	if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(m)}); err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{}
	if err := spoke.Get(ctx, types.NamespacedName{Namespace: "ns2", Name: "helloworld-hub-kubeconfig"}, s); err != nil || string(s.Data["k"]) != "v" {
		t.Errorf("the foreign Secret was changed or removed: %v %v", s.Data, err)
	}
	if err := hub.Get(ctx, client.ObjectKeyFromObject(m), m); err != nil {
		t.Fatal(err)
	}
	c := meta.FindStatusCondition(m.Status.Conditions, addonv1alpha1.ManagedClusterAddOnCertificateRotated)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "was not written by the agent") {
		t.Errorf("ClusterCertificateRotated = %+v, want False saying the Secret is not the agent's", c)
	}
	csrs := &certificatesv1.CertificateSigningRequestList{}
	if err := hub.List(ctx, csrs); err != nil || len(csrs.Items) != 0 {
		t.Errorf("requests filed for a Secret the agent may not write: %d, %v", len(csrs.Items), err)
	}
}
