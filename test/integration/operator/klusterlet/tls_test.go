package klusterlet

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-ocm/kubectl-ocm/config"
	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/tlsprofile"
	"github.com/kubectl-ocm/kubectl-ocm/test/framework"
)

const ecdsaSuite = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"

// testTLSProfile checks the TLS profile the operator passes to the agent
// and copies into the add-on namespaces: the ConfigMap ocm-tls-profile in
// the operator's namespace and the Klusterlet's spec.tlsProfile end up as
// the agent's flags, the field winning key by key, with a hash that
// changes with them; a bad value turns Applied False and leaves the agent
// as it runs; the copies follow the source and go with it, except in a
// namespace that lost the add-on label, where the operator deletes nothing.
func (s *suite) testTLSProfile(t *testing.T) {
	source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorv1.OperatorNamespace, Name: tlsprofile.ConfigMapName},
		Data: map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS13"}}
	app := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "addon-app", Labels: map[string]string{addonv1alpha1.InstallNamespaceLabelKey: "true"}}}
	addonNamespaces := []string{addonv1alpha1.DefaultAddonInstallNamespace, app.Name}

	t.Run("the ConfigMap in the operator's namespace", func(t *testing.T) {
		ns := s.klusterlet(t).AgentNamespace()
		before := s.waitAvailable(t, "the agent before the TLS profile", ns)
		if err := s.spoke.Create(s.ctx, app); err != nil {
			t.Fatal(err)
		}
		if err := s.spoke.Create(s.ctx, source); err != nil {
			t.Fatal(err)
		}
		s.waitTLS(t, before, "--tls-min-version=VersionTLS13")
		for _, n := range addonNamespaces {
			s.waitCopy(t, n, source.Data)
		}
	})

	t.Run("spec.tlsProfile wins key by key", func(t *testing.T) {
		before := s.waitAvailable(t, "the agent before the edit", s.klusterlet(t).AgentNamespace())
		s.edit(t, func(k *operatorv1.Klusterlet) {
			k.Spec.TLSProfile = &operatorv1.TLSProfile{MinTLSVersion: "VersionTLS12", CipherSuites: []string{ecdsaSuite}}
		})
		before = s.waitTLS(t, before, "--tls-min-version=VersionTLS12", "--tls-cipher-suites="+ecdsaSuite)
		// Without the field's version, the ConfigMap's applies again.
		s.setSuites(t, ecdsaSuite)
		s.waitTLS(t, before, "--tls-min-version=VersionTLS13", "--tls-cipher-suites="+ecdsaSuite)
	})

	t.Run("a change of the ConfigMap changes the hash and the copies", func(t *testing.T) {
		before := s.waitAvailable(t, "the agent before the change", s.klusterlet(t).AgentNamespace())
		s.updateSource(t, map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS12"})
		dep := s.waitTLS(t, before, "--tls-min-version=VersionTLS12", "--tls-cipher-suites="+ecdsaSuite)
		if dep.Spec.Template.Annotations[config.TLSConfigHashAnnotation] == before.Spec.Template.Annotations[config.TLSConfigHashAnnotation] {
			t.Errorf("the hash %q did not change with the profile", before.Spec.Template.Annotations[config.TLSConfigHashAnnotation])
		}
		for _, n := range addonNamespaces {
			s.waitCopy(t, n, map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS12"})
		}
		// An edit of a copy is undone.
		copied := &corev1.ConfigMap{}
		if err := s.spoke.Get(s.ctx, types.NamespacedName{Namespace: app.Name, Name: tlsprofile.ConfigMapName}, copied); err != nil {
			t.Fatal(err)
		}
		copied.Data = map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS10"}
		if err := s.spoke.Update(s.ctx, copied); err != nil {
			t.Fatal(err)
		}
		s.waitCopy(t, app.Name, map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS12"})
	})

	t.Run("a bad value sets Applied False and changes nothing", func(t *testing.T) {
		before := s.waitAvailable(t, "the agent before the bad value", s.klusterlet(t).AgentNamespace())
		for _, bad := range []struct {
			name   string
			change func(t *testing.T)
			undo   func(t *testing.T)
			want   string
		}{
			{
				name:   "an unknown suite in spec.tlsProfile",
				change: func(t *testing.T) { s.setSuites(t, "TLS_NO_SUCH_SUITE") },
				undo:   func(t *testing.T) { s.setSuites(t, ecdsaSuite) },
				want:   `spec.tlsProfile.cipherSuites of Klusterlet klusterlet: unknown cipher suite "TLS_NO_SUCH_SUITE"`,
			},
			{
				name:   "a misspelled key in the ConfigMap",
				change: func(t *testing.T) { s.updateSource(t, map[string]string{"minTlsVersion": "VersionTLS13"}) },
				undo:   func(t *testing.T) { s.updateSource(t, map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS12"}) },
				want:   `key "minTlsVersion" is not read: spell it minTLSVersion`,
			},
		} {
			bad.change(t)
			framework.Eventually(s.ctx, t, wait, "Applied False with reason InvalidTLSProfile: "+bad.name, func(context.Context) (bool, error) {
				k := s.klusterlet(t)
				c := meta.FindStatusCondition(k.Status.Conditions, operatorv1.ConditionKlusterletApplied)
				if c == nil || c.Status != metav1.ConditionFalse || c.Reason != config.ReasonInvalidTLSProfile || c.ObservedGeneration != k.Generation {
					return false, fmt.Errorf("Applied %+v", c)
				}
				if !strings.Contains(c.Message, bad.want) {
					return false, fmt.Errorf("Applied message %q lacks %q", c.Message, bad.want)
				}
				return true, nil
			})
			now := &appsv1.Deployment{}
			if err := s.spoke.Get(s.ctx, types.NamespacedName{Namespace: before.Namespace, Name: before.Name}, now); err != nil {
				t.Fatal(err)
			}
			if now.Generation != before.Generation {
				t.Errorf("%s: the agent Deployment changed, generation %d, was %d", bad.name, now.Generation, before.Generation)
			}
			bad.undo(t)
			s.waitAvailable(t, "the agent after "+bad.name+" was undone", before.Namespace)
		}
	})

	t.Run("copies stay where the label goes and go with the source", func(t *testing.T) {
		// The copy holds the source as the last step left it before the
		// label goes: from then on the operator writes nothing there.
		s.waitCopy(t, app.Name, map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS12"})
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			ns := &corev1.Namespace{}
			if err := s.spoke.Get(s.ctx, types.NamespacedName{Name: app.Name}, ns); err != nil {
				return err
			}
			delete(ns.Labels, addonv1alpha1.InstallNamespaceLabelKey)
			return s.spoke.Update(s.ctx, ns)
		})
		if err != nil {
			t.Fatal(err)
		}
		before := s.waitAvailable(t, "the agent before the ConfigMap's removal", s.klusterlet(t).AgentNamespace())
		s.edit(t, func(k *operatorv1.Klusterlet) { k.Spec.TLSProfile = nil })
		if err := s.spoke.Delete(s.ctx, source); err != nil {
			t.Fatal(err)
		}
		s.waitCopy(t, addonv1alpha1.DefaultAddonInstallNamespace, nil)
		s.waitTLS(t, before)
		// In a namespace without the label the operator deletes nothing,
		// whatever the labels of what is there say.
		s.waitCopy(t, app.Name, map[string]string{tlsprofile.MinTLSVersionKey: "VersionTLS12"})
	})
}

// waitTLS waits until the agent Deployment rolled from before runs with the
// TLS flags want (none: no TLS flag, no hash) and the hash of them, and
// returns it.
func (s *suite) waitTLS(t *testing.T, before *appsv1.Deployment, want ...string) *appsv1.Deployment {
	t.Helper()
	dep := s.waitRolled(t, before.Namespace, before)
	framework.Eventually(s.ctx, t, wait, fmt.Sprintf("the agent Deployment with TLS flags %q", want), func(ctx context.Context) (bool, error) {
		dep = s.waitAvailable(t, "the agent", before.Namespace)
		var got []string
		for _, a := range dep.Spec.Template.Spec.Containers[0].Args {
			if strings.HasPrefix(a, "--tls-") {
				got = append(got, a)
			}
		}
		hash := dep.Spec.Template.Annotations[config.TLSConfigHashAnnotation]
		wantHash := ""
		if len(want) > 0 {
			wantHash = tlsprofile.FromFlags(strings.TrimPrefix(want[0], "--tls-min-version="), suitesOf(want)).Hash()
		}
		if !slices.Equal(got, want) || hash != wantHash {
			return false, fmt.Errorf("TLS flags %q with hash %q, want %q with hash %q", got, hash, want, wantHash)
		}
		return true, nil
	})
	args := s.processArgs(t, before.Namespace, dep)
	for _, w := range want {
		if !slices.Contains(args, w) {
			t.Errorf("the agent runs with %q, which lacks %s", args, w)
		}
	}
	return dep
}

// suitesOf returns the suites of the --tls-cipher-suites flag among args.
func suitesOf(args []string) []string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--tls-cipher-suites="); ok {
			return strings.Split(v, ",")
		}
	}
	return nil
}

// waitCopy waits until the copy of the TLS profile in namespace holds data,
// or, for nil data, until there is none.
func (s *suite) waitCopy(t *testing.T, namespace string, data map[string]string) {
	t.Helper()
	framework.Eventually(s.ctx, t, wait, fmt.Sprintf("ConfigMap %s/%s holding %v", namespace, tlsprofile.ConfigMapName, data), func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		err := s.spoke.Get(ctx, types.NamespacedName{Namespace: namespace, Name: tlsprofile.ConfigMapName}, cm)
		switch {
		case data == nil && apierrors.IsNotFound(err):
			return true, nil
		case data == nil && err == nil:
			return false, fmt.Errorf("the copy remains: %v", cm.Data)
		case err != nil:
			return false, err
		}
		if fmt.Sprint(cm.Data) != fmt.Sprint(data) {
			return false, fmt.Errorf("data %v", cm.Data)
		}
		return true, nil
	})
}

// updateSource sets the data of the ConfigMap ocm-tls-profile in the
// operator's namespace.
func (s *suite) updateSource(t *testing.T, data map[string]string) {
	t.Helper()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cm := &corev1.ConfigMap{}
		if err := s.spoke.Get(s.ctx, types.NamespacedName{Namespace: operatorv1.OperatorNamespace, Name: tlsprofile.ConfigMapName}, cm); err != nil {
			return err
		}
		cm.Data = data
		return s.spoke.Update(s.ctx, cm)
	})
	if err != nil {
		t.Fatalf("update the TLS profile: %v", err)
	}
}

// setSuites sets the Klusterlet's spec.tlsProfile.cipherSuites.
func (s *suite) setSuites(t *testing.T, suites ...string) {
	t.Helper()
	s.edit(t, func(k *operatorv1.Klusterlet) { k.Spec.TLSProfile = &operatorv1.TLSProfile{CipherSuites: suites} })
}
