package servingcert

import (
	"crypto/x509"
	"testing"
	"time"

	certutil "k8s.io/client-go/util/cert"
)

func TestPlan(t *testing.T) {
	opts := Options{CommonName: "webhook", Hosts: []string{"svc.ns.svc", "127.0.0.1"}, CAValidity: 100 * time.Hour, ServingValidity: 10 * time.Hour}
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	first, err := Plan(nil, opts, start)
	if err != nil {
		t.Fatal(err)
	}
	if !first.Changed {
		t.Fatal("an empty Secret must change")
	}
	type want struct {
		changed, newCA, newServing bool
		bundle                     int
	}
	tests := []struct {
		name string
		data map[string][]byte
		opts Options
		at   time.Time
		want want
	}{
		{name: "valid stays", data: first.Data, opts: opts, at: start.Add(time.Hour), want: want{bundle: 1}},
		{name: "serving due for rotation", data: first.Data, opts: opts, at: start.Add(9 * time.Hour), want: want{changed: true, newServing: true, bundle: 1}},
		{name: "new host", data: first.Data, opts: Options{CommonName: "webhook", Hosts: []string{"other"}, CAValidity: opts.CAValidity, ServingValidity: opts.ServingValidity}, at: start.Add(time.Hour), want: want{changed: true, newServing: true, bundle: 1}},
		{name: "CA due for rotation keeps the old CA", data: first.Data, opts: opts, at: start.Add(81 * time.Hour), want: want{changed: true, newCA: true, newServing: true, bundle: 2}},
		{name: "foreign CA key", data: map[string][]byte{CABundleKey: first.Data[CABundleKey], CAKeyKey: []byte("junk"), CertKey: first.Data[CertKey], KeyKey: first.Data[KeyKey]}, opts: opts, at: start.Add(time.Hour), want: want{changed: true, newCA: true, bundle: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Plan(tt.data, tt.opts, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			got := want{
				changed:    res.Changed,
				newCA:      string(res.Data[CAKeyKey]) != string(tt.data[CAKeyKey]),
				newServing: string(res.Data[CertKey]) != string(tt.data[CertKey]),
			}
			bundle, err := certutil.ParseCertsPEM(res.Data[CABundleKey])
			if err != nil {
				t.Fatal(err)
			}
			got.bundle = len(bundle)
			if got != tt.want {
				t.Errorf("Plan = %+v, want %+v", got, tt.want)
			}
			for _, h := range tt.opts.Hosts {
				if _, err := Verify(res.Data[CABundleKey], res.Data[CertKey], h, tt.at); err != nil {
					t.Errorf("the bundle does not trust the serving certificate for %s: %v", h, err)
				}
			}
			if !res.Next.After(tt.at) {
				t.Errorf("Next %v is not after %v", res.Next, tt.at)
			}
		})
	}
}

// TestPlanRotationSequence follows a CA through its lifetime: the serving
// certificate never outlives its CA, and an expired CA leaves the bundle.
func TestPlanRotationSequence(t *testing.T) {
	opts := Options{CommonName: "webhook", Hosts: []string{"h"}, CAValidity: 10 * time.Hour, ServingValidity: 4 * time.Hour}
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var data map[string][]byte
	for step := 0; step < 40; step++ {
		res, err := Plan(data, opts, now)
		if err != nil {
			t.Fatal(err)
		}
		data = res.Data
		leaf, err := Verify(data[CABundleKey], data[CertKey], "h", now)
		if err != nil {
			t.Fatalf("at %v the served certificate is not trusted: %v", now, err)
		}
		bundle, _ := certutil.ParseCertsPEM(data[CABundleKey])
		if len(bundle) > 2 {
			t.Fatalf("at %v the bundle holds %d CAs", now, len(bundle))
		}
		if leaf.NotAfter.After(signerOf(t, leaf, bundle).NotAfter) {
			t.Fatalf("the serving certificate outlives its CA")
		}
		now = now.Add(time.Hour)
	}
}

func signerOf(t *testing.T, leaf *x509.Certificate, bundle []*x509.Certificate) *x509.Certificate {
	for _, ca := range bundle {
		if leaf.CheckSignatureFrom(ca) == nil {
			return ca
		}
	}
	t.Fatal("no CA of the bundle signed the serving certificate")
	return nil
}
