package v1beta1_test

import (
	"math/rand"
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	runtimeserializer "k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/diff"
	"sigs.k8s.io/controller-runtime/pkg/conversion"
	"sigs.k8s.io/randfill"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1beta1"
)

// roundTripIterations is how many random objects of each kind and version
// the randomized round trip converts; -short converts fewer.
const roundTripIterations = 500

// kinds pairs a constructor of each v1alpha1 kind with one of its hub.
var kinds = []struct {
	name  string
	alpha func() conversion.Convertible
	beta  func() conversion.Hub
}{
	{"ClusterManagementAddOn", func() conversion.Convertible { return &v1alpha1.ClusterManagementAddOn{} }, func() conversion.Hub { return &v1beta1.ClusterManagementAddOn{} }},
	{"ManagedClusterAddOn", func() conversion.Convertible { return &v1alpha1.ManagedClusterAddOn{} }, func() conversion.Hub { return &v1beta1.ManagedClusterAddOn{} }},
	{"AddOnDeploymentConfig", func() conversion.Convertible { return &v1alpha1.AddOnDeploymentConfig{} }, func() conversion.Hub { return &v1beta1.AddOnDeploymentConfig{} }},
	{"AddOnTemplate", func() conversion.Convertible { return &v1alpha1.AddOnTemplate{} }, func() conversion.Hub { return &v1beta1.AddOnTemplate{} }},
}

// fuzzerFuncs are apimachinery's metadata fuzzers plus the rules the v1beta1
// schema sets on registrations: a registration is of one of the two types and
// holds the details of that type only. Conversion maps a registration by its
// type, so a member of the other type, or a type outside the enum, has no
// v1alpha1 form; the API server rejects such objects anyway.
func fuzzerFuncs(codecs runtimeserializer.CodecFactory) []any {
	return append(metafuzzer.Funcs(codecs),
		func(r *v1beta1.RegistrationConfig, c randfill.Continue) {
			if c.Bool() {
				*r = v1beta1.RegistrationConfig{Type: v1beta1.KubeClient, KubeClient: &v1beta1.KubeClientConfig{}}
				c.Fill(r.KubeClient)
				return
			}
			*r = v1beta1.RegistrationConfig{Type: v1beta1.CustomSigner, CustomSigner: &v1beta1.CustomSignerConfig{}}
			c.Fill(r.CustomSigner)
			if r.CustomSigner.SignerName == kubeSigner {
				r.CustomSigner.SignerName = "example.com/" + r.CustomSigner.SignerName
			}
		},
	)
}

// codecs serve the metadata fuzzers that fill runtime.RawExtensions.
var codecs = runtimeserializer.NewCodecFactory(apis.Scheme)

// tune sets how often a random object's optional fields are nil and how long
// its lists are.
func tune(f *randfill.Filler) *randfill.Filler {
	return f.NilChance(.3).NumElements(0, 3)
}

// roundTripAlpha converts alpha to v1beta1 and back and reports any change,
// including a change of alpha itself.
func roundTripAlpha(t *testing.T, alpha conversion.Convertible, beta conversion.Hub, back conversion.Convertible) {
	t.Helper()
	before := alpha.DeepCopyObject()
	if err := alpha.ConvertTo(beta); err != nil {
		t.Fatalf("v1alpha1 to v1beta1: %v", err)
	}
	if err := back.ConvertFrom(beta); err != nil {
		t.Fatalf("v1beta1 back to v1alpha1: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(before, alpha) {
		t.Fatalf("conversion changed its v1alpha1 source (-after +before):\n%s", diff.Diff(alpha, before))
	}
	if !apiequality.Semantic.DeepEqual(back, alpha) {
		t.Fatalf("v1alpha1 → v1beta1 → v1alpha1 lost data (-got +want):\n%s", diff.Diff(back, alpha))
	}
}

// roundTripBeta converts beta to v1alpha1 and back and reports any change,
// including a change of beta itself.
func roundTripBeta(t *testing.T, beta conversion.Hub, alpha conversion.Convertible, back conversion.Hub) {
	t.Helper()
	before := beta.DeepCopyObject()
	if err := alpha.ConvertFrom(beta); err != nil {
		t.Fatalf("v1beta1 to v1alpha1: %v", err)
	}
	if err := alpha.ConvertTo(back); err != nil {
		t.Fatalf("v1alpha1 back to v1beta1: %v", err)
	}
	if !apiequality.Semantic.DeepEqual(before, beta) {
		t.Fatalf("conversion changed its v1beta1 source (-after +before):\n%s", diff.Diff(beta, before))
	}
	if !apiequality.Semantic.DeepEqual(back, beta) {
		t.Fatalf("v1beta1 → v1alpha1 → v1beta1 lost data (-got +want):\n%s", diff.Diff(back, beta))
	}
}

// TestRoundTrip converts random objects of every kind from each version to
// the other and back, as apimachinery's round-trip tests do, and requires
// them unchanged.
func TestRoundTrip(t *testing.T) {
	n := roundTripIterations
	if testing.Short() {
		n = 50
	}
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	f := tune(fuzzer.FuzzerFor(fuzzerFuncs, rand.NewSource(seed), codecs))
	for _, k := range kinds {
		t.Run(k.name+"/v1alpha1", func(t *testing.T) {
			for range n {
				alpha := k.alpha()
				f.Fill(alpha)
				roundTripAlpha(t, alpha, k.beta(), k.alpha())
			}
		})
		t.Run(k.name+"/v1beta1", func(t *testing.T) {
			for range n {
				beta := k.beta()
				f.Fill(beta)
				roundTripBeta(t, beta, k.alpha(), k.beta())
			}
		})
	}
}

// FuzzRoundTrip is TestRoundTrip driven by go test -fuzz: the input chooses
// the kind, the version and, through randfill, every field.
func FuzzRoundTrip(f *testing.F) {
	for i := range 2 * len(kinds) {
		f.Add([]byte{byte(i), 1, 2, 3, 4, 5, 6, 7, 8})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		k := kinds[int(data[0])%len(kinds)]
		filler := tune(randfill.NewFromGoFuzz(data[1:]).Funcs(fuzzerFuncs(codecs)...))
		if data[0]/byte(len(kinds))%2 == 0 {
			alpha := k.alpha()
			filler.Fill(alpha)
			roundTripAlpha(t, alpha, k.beta(), k.alpha())
			return
		}
		beta := k.beta()
		filler.Fill(beta)
		roundTripBeta(t, beta, k.alpha(), k.beta())
	})
}
