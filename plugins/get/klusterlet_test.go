package get

import (
	"bytes"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

func TestPrintKlusterlet(t *testing.T) {
	k := &operatorv1.Klusterlet{
		ObjectMeta: metav1.ObjectMeta{Name: "klusterlet", Generation: 3},
		Spec:       operatorv1.KlusterletSpec{ClusterName: "cluster1", ImagePullSpec: "quay.io/kubectl-ocm/ocm-controller:v0.2.0"},
		Status: operatorv1.KlusterletStatus{
			ObservedGeneration: 3,
			Conditions: []metav1.Condition{
				{Type: "Available", Status: metav1.ConditionFalse, Reason: "NoAvailablePods", Message: "Deployment open-cluster-management-agent/klusterlet-agent: ImageNotMapped"},
			},
			Generations:      []operatorv1.GenerationStatus{{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "open-cluster-management-agent", Name: "klusterlet-agent", LastGeneration: 4}},
			RelatedResources: []operatorv1.RelatedResourceMeta{{Version: "v1", Resource: "namespaces", Name: "open-cluster-management-agent"}},
		},
	}
	var out bytes.Buffer
	if err := PrintKlusterlet(&out, k, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Cluster:       cluster1\n", "Namespace:     open-cluster-management-agent\n", "Mode:          Default\n",
		"Image:         quay.io/kubectl-ocm/ocm-controller:v0.2.0\n", "Generation:    3 (observed 3)\n",
		"Registration:  csr (a client certificate the hub signs)\n",
		"  Available  False   NoAvailablePods  Deployment open-cluster-management-agent/klusterlet-agent: ImageNotMapped\n",
		"  deployments.apps open-cluster-management-agent/klusterlet-agent: 4\n", "  namespaces open-cluster-management-agent\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestPrintKlusterletTokenDriver(t *testing.T) {
	k := &operatorv1.Klusterlet{
		ObjectMeta: metav1.ObjectMeta{Name: "klusterlet"},
		Spec: operatorv1.KlusterletSpec{ClusterName: "cluster1", RegistrationConfiguration: &operatorv1.RegistrationConfiguration{
			RegistrationDriver: operatorv1.RegistrationDriver{AuthType: operatorv1.TokenAuthType},
		}},
	}
	var out bytes.Buffer
	if err := PrintKlusterlet(&out, k, nil); err != nil {
		t.Fatal(err)
	}
	if want := "Registration:  token ("; !strings.Contains(out.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, out.String())
	}
}

// TestPrintKlusterletHubs pins the whole report, with its three aligned
// blocks: settings, hubs and conditions.
func TestPrintKlusterletHubs(t *testing.T) {
	k := &operatorv1.Klusterlet{
		ObjectMeta: metav1.ObjectMeta{Name: "klusterlet", Generation: 2},
		Spec:       operatorv1.KlusterletSpec{ClusterName: "c1", ImagePullSpec: "ocm-controller:dev"},
		Status: operatorv1.KlusterletStatus{
			ObservedGeneration: 1,
			Conditions: []metav1.Condition{
				{Type: "Available", Status: metav1.ConditionTrue, Reason: "AllAvailable", Message: "all\nready"},
				{Type: "HubConnectionDegraded", Status: metav1.ConditionFalse, Reason: "HubConnectionFunctional", Message: "ok"},
			},
		},
	}
	hubs := []KlusterletHub{
		{Secret: "bootstrap-hub-kubeconfig", Server: "https://hub1.example:6443", Current: true},
		{Secret: "standby", Problem: "Secret not found"},
	}
	var out bytes.Buffer
	if err := PrintKlusterlet(&out, k, hubs); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"Klusterlet:              klusterlet",
		"Cluster:                 c1",
		"Namespace:               open-cluster-management-agent",
		"Mode:                    Default",
		"Image:                   ocm-controller:dev",
		"Registration:            csr (a client certificate the hub signs)",
		"Generation:              2 (observed 1)",
		"Hub connection timeout:  600s (then the agent moves to the next hub that answers)",
		"Hubs:",
		"  SECRET                    SERVER                     CURRENT",
		"  bootstrap-hub-kubeconfig  https://hub1.example:6443  yes",
		"  standby                   (Secret not found)         ",
		"Conditions:",
		"  TYPE                   STATUS  REASON                   MESSAGE",
		"  Available              True    AllAvailable             all ready",
		"  HubConnectionDegraded  False   HubConnectionFunctional  ok",
		"Generations:",
		"Related resources:",
		"",
	}, "\n")
	if out.String() != want {
		t.Errorf("report:\n%s\nwant:\n%s", out.String(), want)
	}
}
