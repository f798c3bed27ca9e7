package config

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ocm/kubectl-ocm/pkg/addon/conversion"
)

// TestHubObjectsConversion checks the conversion stanza of the converted
// CRDs and the hub controller's webhook flags, through the Service and
// through a URL.
func TestHubObjectsConversion(t *testing.T) {
	tests := []struct {
		name      string
		url       string
		wantArgs  []string
		wantURL   string
		wantError bool
	}{
		{name: "service", wantArgs: []string{"--webhook-bind-address=:9443"}},
		{name: "loopback url", url: "https://127.0.0.1:9555/convert", wantArgs: []string{"--webhook-bind-address=127.0.0.1:9555", "--webhook-hosts=127.0.0.1"}, wantURL: "https://127.0.0.1:9555/convert"},
		{name: "external url", url: "https://hub.example.com/convert", wantArgs: []string{"--webhook-bind-address=:443", "--webhook-hosts=hub.example.com"}, wantURL: "https://hub.example.com/convert"},
		{name: "http url", url: "http://127.0.0.1:9555/convert", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs, err := HubObjects(HubValues{ConversionWebhookURL: tt.url})
			if tt.wantError {
				if err == nil {
					t.Fatal("HubObjects accepted an invalid URL")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			converted, service := 0, false
			for _, u := range objs {
				switch {
				case u.GetKind() == "CustomResourceDefinition" && conversion.IsConverted(u.GetName()):
					converted++
					crd := &apiextensionsv1.CustomResourceDefinition{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
						t.Fatal(err)
					}
					cc := crd.Spec.Conversion.Webhook.ClientConfig
					if crd.Spec.Conversion.Strategy != apiextensionsv1.WebhookConverter || len(cc.CABundle) != 0 {
						t.Errorf("%s: conversion %+v, want Webhook without caBundle", crd.Name, crd.Spec.Conversion)
					}
					switch {
					case tt.wantURL != "" && (cc.URL == nil || *cc.URL != tt.wantURL):
						t.Errorf("%s: clientConfig %+v, want url %s", crd.Name, cc, tt.wantURL)
					case tt.wantURL == "" && (cc.Service == nil || cc.Service.Name != conversion.ServiceName || *cc.Service.Path != conversion.Path):
						t.Errorf("%s: clientConfig %+v, want Service %s", crd.Name, cc, conversion.ServiceName)
					}
				case u.GetKind() == "Service" && u.GetName() == conversion.ServiceName:
					service = true
				case u.GetKind() == "Deployment" && u.GetName() == HubControllerDeployment:
					dep := &appsv1.Deployment{}
					if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, dep); err != nil {
						t.Fatal(err)
					}
					args := dep.Spec.Template.Spec.Containers[0].Args
					for _, want := range tt.wantArgs {
						if !slices.Contains(args, want) {
							t.Errorf("hub controller args %v lack %s", args, want)
						}
					}
				}
			}
			if converted != len(conversion.CRDNames) || !service {
				t.Errorf("%d converted CRDs (want %d), Service %s present: %v", converted, len(conversion.CRDNames), conversion.ServiceName, service)
			}
		})
	}
}
