// Original file: proto/rebound/v1/dispatcher.proto


export interface ClusterOverviewRequest {
}

export interface ClusterOverviewRequest__Output {
}
