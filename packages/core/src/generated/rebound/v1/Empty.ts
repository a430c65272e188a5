// Original file: proto/rebound/v1/common.proto


export interface Empty {
}

export interface Empty__Output {
}
