package agent

import (
	"testing"

	"github.com/stretchr/testify/require"

	operatorv1 "github.com/kubectl-ocm/kubectl-ocm/pkg/apis/operator/v1"
)

func TestHostingCluster(t *testing.T) {
	enable := operatorv1.ReportHostingClusterModeEnable
	tests := []struct {
		name string
		opt  operatorv1.KlusterletDeployOption
		want string
	}{
		{name: "not reported by default", opt: operatorv1.KlusterletDeployOption{}},
		{name: "disabled", opt: operatorv1.KlusterletDeployOption{ReportHostingCluster: operatorv1.ReportHostingClusterModeDisable}},
		{name: "Default mode: the cluster itself", opt: operatorv1.KlusterletDeployOption{ReportHostingCluster: enable}, want: "cluster2"},
		{name: "Singleton mode: the cluster itself", opt: operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeSingleton, ReportHostingCluster: enable}, want: "cluster2"},
		{name: "Hosted mode: the management cluster", opt: operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeHosted, ReportHostingCluster: enable,
			Hosted: &operatorv1.KlusterletHostedConfiguration{ManagementClusterName: "cluster1"}}, want: "cluster1"},
		{name: "Hosted mode without a management cluster: nothing", opt: operatorv1.KlusterletDeployOption{Mode: operatorv1.InstallModeSingletonHosted, ReportHostingCluster: enable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &operatorv1.Klusterlet{Spec: operatorv1.KlusterletSpec{DeployOption: tt.opt}}
			require.Equal(t, tt.want, hostingCluster(k, "cluster2"))
		})
	}
}
