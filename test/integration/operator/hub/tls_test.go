package hub

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
)

const ecdsaSuite = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"

// testTLSProfile checks the TLS profile the operator passes to the hub
// controller: the ConfigMap ocm-tls-profile in the operator's namespace and
// the ClusterManager's spec.tlsProfile end up as its flags, the field
// winning key by key, with a hash that changes with them; a bad value turns
// Applied False and leaves the hub controller as it runs.
func testTLSProfile(t *testing.T, s *suite) {
	source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: config.OperatorNamespace, Name: tlsprofile.ConfigMapName},
		Data: map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS13"}}
	if err := s.admin.Create(s.ctx, source); err != nil {
		t.Fatal(err)
	}
	first := s.waitTLS(t, "--tls-min-version=VersionTLS13")

	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.TLSProfile = &operatorv1.TLSProfile{MinTLSVersion: "VersionTLS12", CipherSuites: []string{ecdsaSuite}}
	}))
	second := s.waitTLS(t, "--tls-min-version=VersionTLS12", "--tls-cipher-suites="+ecdsaSuite)

	// A change of the ConfigMap under a key the field leaves unset.
	s.waitAvailable(t, s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.TLSProfile = &operatorv1.TLSProfile{CipherSuites: []string{ecdsaSuite}}
	}))
	third := s.waitTLS(t, "--tls-min-version=VersionTLS13", "--tls-cipher-suites="+ecdsaSuite)
	updateData(t, s, map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS12"})
	fourth := s.waitTLS(t, "--tls-min-version=VersionTLS12", "--tls-cipher-suites="+ecdsaSuite)
	hashes := []string{first, second, third, fourth}
	if first == second || second != fourth || third == fourth {
		t.Errorf("hashes %q: want them to follow the flags", hashes)
	}

	// The CRD takes the two versions a profile of the field may start at.
	// The operator writes the status meanwhile: a conflict is retried.
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm, err := s.clusterManager(s.ctx)
		if err != nil {
			return err
		}
		cm.Spec.TLSProfile = &operatorv1.TLSProfile{MinTLSVersion: "VersionTLS11"}
		return s.admin.Update(s.ctx, cm)
	})
	assert.True(t, apierrors.IsInvalid(err), "spec.tlsProfile.minTLSVersion VersionTLS11: got %v, want the API server to refuse it", err)
	assert.ErrorContains(t, err, "spec.tlsProfile.minTLSVersion")

	dep, err := s.controller(s.ctx)
	if err != nil {
		t.Fatal(err)
	}
	gen := s.edit(t, func(cm *operatorv1.ClusterManager) {
		cm.Spec.TLSProfile = &operatorv1.TLSProfile{CipherSuites: []string{ecdsaSuite, "TLS_NO_SUCH_SUITE"}}
	})
	applied := s.waitCondition(t, gen, operatorv1.ConditionClusterManagerApplied, metav1.ConditionFalse)
	if applied.Reason != config.ReasonInvalidTLSProfile || !strings.Contains(applied.Message, `spec.tlsProfile.cipherSuites of ClusterManager cluster-manager: unknown cipher suite "TLS_NO_SUCH_SUITE"`) {
		t.Errorf("Applied %s: %s; want reason %s naming the field and the suite", applied.Reason, applied.Message, config.ReasonInvalidTLSProfile)
	}
	s.waitCondition(t, gen, operatorv1.ConditionClusterManagerAvailable, metav1.ConditionTrue)
	if now, err := s.controller(s.ctx); err != nil {
		t.Error(err)
	} else if now.Generation != dep.Generation {
		t.Errorf("the hub controller Deployment changed: generation %d, was %d", now.Generation, dep.Generation)
	}

	// Without the field and the ConfigMap, no flag and no hash.
	gen = s.edit(t, func(cm *operatorv1.ClusterManager) { cm.Spec.TLSProfile = nil })
	if err := s.admin.Delete(s.ctx, source); err != nil {
		t.Fatal(err)
	}
	s.waitAvailable(t, gen)
	s.waitTLS(t)
}

// waitTLS waits until the hub controller Deployment carries the TLS flags
// want (none: no TLS flag and no hash) with their hash, and a hub
// controller process runs with them, and returns the hash.
func (s *suite) waitTLS(t *testing.T, want ...string) string {
	t.Helper()
	wantHash := ""
	if len(want) > 0 {
		var min string
		var suites []string
		for _, a := range want {
			if v, ok := strings.CutPrefix(a, "--tls-min-version="); ok {
				min = v
			}
			if v, ok := strings.CutPrefix(a, "--tls-cipher-suites="); ok {
				suites = strings.Split(v, ",")
			}
		}
		wantHash = tlsprofile.FromFlags(min, suites).Hash()
	}
	s.waitController(t, fmt.Sprintf("TLS flags %q", want), func(dep *appsv1.Deployment) error {
		var got []string
		for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
			if strings.HasPrefix(a, "--tls-") {
				got = append(got, a)
			}
		}
		if hash := dep.Spec.Template.Annotations[config.TLSConfigHashAnnotation]; !slices.Equal(got, want) || hash != wantHash {
			return fmt.Errorf("TLS flags %q with hash %q, want %q with hash %q", got, hash, want, wantHash)
		}
		return nil
	})
	for _, w := range want {
		s.process(t, w)
	}
	return wantHash
}

// updateData sets the data of the ConfigMap ocm-tls-profile in the
// operator's namespace.
func updateData(t *testing.T, s *suite, data map[string]string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := s.admin.Get(s.ctx, client.ObjectKey{Namespace: config.OperatorNamespace, Name: tlsprofile.ConfigMapName}, cm); err != nil {
			return err
		}
		cm.Data = data
		return s.admin.Update(s.ctx, cm)
	})
	if err != nil {
		t.Fatalf("update the TLS profile: %v", err)
	}
}
