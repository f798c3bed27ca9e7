package app

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workagent "github.com/kubectl-ocm/kubectl-ocm/controllers/work/agent"
	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

func TestApplyWorkConfiguration(t *testing.T) {
	defaults := workagent.Options{HubQPS: 50, HubBurst: 100, EvictionGracePeriod: time.Hour, StatusSyncInterval: time.Minute}
	full := &operatorv1.WorkAgentConfiguration{HubKubeAPIQPS: 200, HubKubeAPIBurst: 400,
		AppliedManifestWorkEvictionGracePeriod: &metav1.Duration{Duration: 5 * time.Minute}, StatusSyncInterval: &metav1.Duration{Duration: 10 * time.Second}}
	tests := []struct {
		name     string
		wc       *operatorv1.WorkAgentConfiguration
		flagsSet map[string]bool
		want     workagent.Options
	}{
		{name: "no work configuration keeps the flags", want: defaults},
		{name: "zero fields keep the flags", wc: &operatorv1.WorkAgentConfiguration{}, want: defaults},
		{name: "Klusterlet values replace defaults", wc: full,
			want: workagent.Options{HubQPS: 200, HubBurst: 400, EvictionGracePeriod: 5 * time.Minute, StatusSyncInterval: 10 * time.Second}},
		{name: "explicit flags win", wc: full, flagsSet: map[string]bool{flagHubQPS: true, flagEvictionGracePeriod: true},
			want: workagent.Options{HubQPS: 50, HubBurst: 400, EvictionGracePeriod: time.Hour, StatusSyncInterval: 10 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := defaults
			applyWorkConfiguration(tt.wc, tt.flagsSet, &got)
			if got != tt.want {
				t.Errorf("options = %+v, want %+v", got, tt.want)
			}
		})
	}
}
