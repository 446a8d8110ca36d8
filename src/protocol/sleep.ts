// A promise that resolves after `ms`: shared by the Worker (dispatch, wait) and the receiver.
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
