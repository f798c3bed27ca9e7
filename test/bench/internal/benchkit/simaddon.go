package benchkit

import (
	"context"
	"fmt"
	"sync"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	addonv1alpha1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/addon/v1alpha1"
	clusterv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/cluster/v1"
	"github.com/kubectl-ocm/kubectl-ocm/pkg/certs"
	regcsr "github.com/kubectl-ocm/kubectl-ocm/pkg/registration/csr"
)

// How a simulated agent waits for an add-on request, as the add-on
// registration agent does: 250 ms at first, doubling up to 5 s.
const (
	addonRequestFirstPoll = 250 * time.Millisecond
	addonRequestMaxPoll   = 5 * time.Second
)

// serveAddonRegistrations starts a's add-on registration agent: an informer
// on the ManagedClusterAddOns of its cluster namespace, with the agent's own
// certificate identity, that files one certificate signing request for the
// first kube-apiserver-client registration of each add-on (the subject of
// certs.AddonSubject, the add-on agent's name and labels) and waits, with
// the agent's backoff, until the hub approves it and the signer issues it.
// There is no managed cluster to write the credential to: the certificate
// is dropped. Each add-on is served once. It returns once the informer has
// synced; the informer and the requests run in loops until ctx ends.
func (a *SimAgent) serveAddonRegistrations(ctx context.Context, h *SimHub, loops *sync.WaitGroup) error {
	var mu sync.Mutex
	served := map[string]bool{}
	serve := func(obj any) {
		mca, ok := obj.(*addonv1alpha1.ManagedClusterAddOn)
		if !ok || !mca.DeletionTimestamp.IsZero() {
			return
		}
		var reg *addonv1alpha1.RegistrationConfig
		for i, r := range mca.Status.Registrations {
			if r.SignerName == certificatesv1.KubeAPIServerClientSignerName {
				reg = &mca.Status.Registrations[i]
				break
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if reg == nil || served[mca.Name] {
			return
		}
		served[mca.Name] = true
		addon, subject := mca.Name, *reg.Subject.DeepCopy()
		loops.Go(func() {
			switch err := a.requestAddonCertificate(ctx, addon, subject); {
			case err == nil:
				h.addonCerts.Add(1)
			case ctx.Err() == nil:
				h.addonFailures.Add(1)
			}
		})
	}
	lw := ListWatch(a.hub, &addonv1alpha1.ManagedClusterAddOnList{}, client.InNamespace(a.cluster))
	synced := RunInformer(ctx, loops, lw, &addonv1alpha1.ManagedClusterAddOn{}, serve)
	if !cache.WaitForCacheSync(ctx.Done(), synced) {
		return fmt.Errorf("the ManagedClusterAddOn informer of %s did not sync: %w", a.cluster, ctx.Err())
	}
	return nil
}

// requestAddonCertificate files the certificate signing request of addon's
// registration subject with a new key and waits until it is issued; a
// denied request is filed again. It gives up after simTimeout.
func (a *SimAgent) requestAddonCertificate(ctx context.Context, addon string, subject addonv1alpha1.Subject) error {
	p, err := certs.NewPendingRequest()
	if err != nil {
		return err
	}
	template := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: "addon-" + a.cluster + "-" + addon + "-",
			Labels:       map[string]string{clusterv1.ClusterNameLabelKey: a.cluster, addonv1alpha1.AddonLabelKey: addon},
		},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			SignerName: certificatesv1.KubeAPIServerClientSignerName,
			Usages:     regcsr.AgentUsages(),
		},
	}
	ctx, cancel := context.WithTimeout(ctx, simTimeout)
	defer cancel()
	var last error
	for wait := addonRequestFirstPoll; ; wait = min(2*wait, addonRequestMaxPoll) {
		st, _, err := certs.Request(ctx, a.hub, p, certs.AddonSubject(a.cluster, addon, subject), template)
		switch {
		case err != nil:
			last = err
		case st.Phase == certs.RequestIssued:
			return nil
		case st.Phase == certs.RequestDenied:
			p.CSRName = ""
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("the certificate of add-on %s on %s: %w (last error: %v)", addon, a.cluster, ctx.Err(), last)
		case <-t.C:
		}
	}
}
