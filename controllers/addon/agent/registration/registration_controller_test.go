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
	"github.com/kubectl-ocm/kubectl-ocm/pkg/identity"
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

func TestCertRegistrations(t *testing.T) {
	custom2 := addonv1alpha1.RegistrationConfig{SignerName: "example.com/custom", Subject: addonv1alpha1.Subject{User: "second"}}
	tests := []struct {
		name   string
		driver string
		mca    *addonv1alpha1.ManagedClusterAddOn
		want   []string // signer target pending
	}{
		{"no registration", "", mca(""), nil},
		{"kube client", "", mca("", kubeClient), []string{
			"kubernetes.io/kube-apiserver-client ns/helloworld-hub-kubeconfig agent/helloworld-hub-kubeconfig-pending"}},
		{"custom signer, first of each signer", "", mca("", custom, kubeClient, custom2), []string{
			"example.com/custom ns/helloworld-example.com-custom-client-cert agent/helloworld-example.com-custom-client-cert-pending",
			"kubernetes.io/kube-apiserver-client ns/helloworld-hub-kubeconfig agent/helloworld-hub-kubeconfig-pending"}},
		{"token driver serves the kube client", addonv1alpha1.KubeClientDriverToken, mca("", kubeClient, custom), []string{
			"example.com/custom ns/helloworld-example.com-custom-client-cert agent/helloworld-example.com-custom-client-cert-pending"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.mca.Status.Namespace = "ns"
			r := &Reconciler{Cluster: "c1", Namespace: "agent", Driver: tt.driver}
			var got []string
			for _, reg := range r.certRegistrations(tt.mca) {
				got = append(got, reg.signer+" "+reg.target.String()+" "+reg.pending.String())
				if reg.signer == custom.SignerName && reg.subject.CommonName != identity.AddonUserName("c1", "helloworld", "helloworld") {
					t.Errorf("custom signer subject = %v, want the default one of its first registration", reg.subject)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("certRegistrations = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReportRotation(t *testing.T) {
	ok, wrote := &rotation{ok: true, message: "a valid"}, &rotation{ok: true, wrote: true, message: "b written"}
	tests := []struct {
		name       string
		current    metav1.ConditionStatus
		rotations  []*rotation
		wantStatus metav1.ConditionStatus
		wantText   string
	}{
		{"all valid, first report", "", []*rotation{ok, ok}, metav1.ConditionTrue, "a valid; a valid"},
		{"all valid, already True", metav1.ConditionTrue, []*rotation{ok}, metav1.ConditionTrue, "before"},
		{"one just written", metav1.ConditionTrue, []*rotation{ok, wrote}, metav1.ConditionTrue, "a valid; b written"},
		{"one failed", metav1.ConditionTrue, []*rotation{ok, failed("c failed"), nil}, metav1.ConditionFalse, "c failed"},
		{"one waiting", metav1.ConditionFalse, []*rotation{ok, nil}, metav1.ConditionFalse, "before"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mca("", kubeClient)
			if tt.current != "" {
				meta.SetStatusCondition(&m.Status.Conditions, metav1.Condition{Type: addonv1alpha1.ManagedClusterAddOnCertificateRotated,
					Status: tt.current, Reason: "R", Message: "before"})
			}
			hub := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(m).WithStatusSubresource(m).Build()
			r := &Reconciler{Hub: hub, Cluster: "c1"}
			if err := r.reportRotation(context.Background(), m, tt.rotations); err != nil {
				t.Fatal(err)
			}
			got := &addonv1alpha1.ManagedClusterAddOn{}
			if err := hub.Get(context.Background(), client.ObjectKeyFromObject(m), got); err != nil {
				t.Fatal(err)
			}
			c := meta.FindStatusCondition(got.Status.Conditions, addonv1alpha1.ManagedClusterAddOnCertificateRotated)
			if c == nil || c.Status != tt.wantStatus || c.Message != tt.wantText {
				t.Errorf("ClusterCertificateRotated = %+v, want %s %q", c, tt.wantStatus, tt.wantText)
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

func TestReconcileCleansUp(t *testing.T) {
	tests := []struct {
		name        string
		mca         *addonv1alpha1.ManagedClusterAddOn
		wantSecrets []string
		wantCSR     string
	}{
		{"ManagedClusterAddOn gone", nil, []string{"addon-ns/other", "ns2/helloworld-hub-kubeconfig"}, ""},
		{"registration removed", mca(""), []string{"addon-ns/other", "ns2/helloworld-hub-kubeconfig"}, ""},
		{"only a custom signer", mca("", custom), []string{"addon-ns/other", "agent/helloworld-example.com-custom-client-cert-pending",
			"ns2/helloworld-hub-kubeconfig"}, "example.com/custom"},
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
			r := &Reconciler{Hub: hub, HubDirect: hub, Cluster: "c1", Managed: spoke, ManagedReader: spoke, Agent: spoke, AgentReader: spoke, Namespace: "agent"}
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
			csrs := &certificatesv1.CertificateSigningRequestList{}
			if err := hub.List(ctx, csrs); err != nil {
				t.Fatal(err)
			}
			var signers []string
			for _, c := range csrs.Items {
				signers = append(signers, c.Spec.SignerName)
			}
			if want := strings.Fields(tt.wantCSR); !slices.Equal(signers, want) {
				t.Errorf("requests filed with signers %v, want %v", signers, want)
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

// TestHostedTarget writes the credential of a hosted add-on on the cluster
// the agent runs on and cleans up where it wrote.
func TestHostedTarget(t *testing.T) {
	secret := func(ns, name string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Labels: map[string]string{clusterv1.ClusterNameLabelKey: "c1", addonv1alpha1.AddonLabelKey: "helloworld"}}}
	}
	managed := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(secret("ns", "helloworld-hub-kubeconfig")).Build()
	hosting := fake.NewClientBuilder().WithScheme(apis.Scheme).WithObjects(
		secret("ns", "helloworld-hub-kubeconfig"), secret("ns", "helloworld-old"), secret("agent", "helloworld-hub-kubeconfig-pending")).Build()
	r := &Reconciler{Cluster: "c1", Namespace: "agent", Managed: managed, ManagedReader: managed, Agent: hosting, AgentReader: hosting, Hosted: true}

	m := mca("", kubeClient)
	m.Status.Namespace = "ns"
	if w, _ := r.targetCluster(m); w != managed {
		t.Error("an add-on in Default mode has its credential written elsewhere than on the managed cluster")
	}
	m.Annotations = map[string]string{addonv1alpha1.HostingClusterNameAnnotationKey: "hosting1"}
	if w, _ := r.targetCluster(m); w != hosting {
		t.Error("a hosted add-on has its credential written elsewhere than on the cluster the agent runs on")
	}

	if w, _ := (&Reconciler{Managed: managed, Agent: hosting}).targetCluster(m); w != managed {
		t.Error("an agent on the managed cluster writes the credential of a hosted add-on elsewhere than there")
	}

	target := secretKey(m)
	pending := types.NamespacedName{Namespace: "agent", Name: "helloworld-hub-kubeconfig-pending"}
	if err := r.cleanup(context.Background(), "helloworld", r.hostingNamespace(m), target, pending); err != nil {
		t.Fatal(err)
	}
	exists := func(c client.Client, ns, name string) bool {
		return c.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, &corev1.Secret{}) == nil
	}
	for _, tc := range []struct {
		what string
		c    client.Client
		name types.NamespacedName
		want bool
	}{
		{"the Default-mode credential on the managed cluster", managed, target, false},
		{"the hosted credential on the hosting cluster", hosting, target, true},
		{"another Secret of the add-on in its hosting namespace", hosting, types.NamespacedName{Namespace: "ns", Name: "helloworld-old"}, false},
		{"the pending request", hosting, pending, true},
	} {
		if got := exists(tc.c, tc.name.Namespace, tc.name.Name); got != tc.want {
			t.Errorf("%s %s exists = %v, want %v", tc.what, tc.name, got, tc.want)
		}
	}
}
