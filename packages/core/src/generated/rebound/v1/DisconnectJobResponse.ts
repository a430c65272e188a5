// Original file: proto/rebound/v1/taskexecutor.proto


export interface DisconnectJobResponse {
}

export interface DisconnectJobResponse__Output {
}
