// Original file: proto/rebound/v1/dispatcher.proto


export interface ListJobsRequest {
}

export interface ListJobsRequest__Output {
}
