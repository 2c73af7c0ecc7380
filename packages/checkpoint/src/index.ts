/**
 * @since 0.1.0
 */
export * as Anthropic from "./Anthropic.js"
/**
 * @since 0.1.0
 */
export * as Checkpoint from "./Checkpoint.js"
/**
 * @since 0.1.0
 */
export * as CheckpointError from "./CheckpointError.js"
/**
 * @since 0.1.0
 */
export * as CheckpointStore from "./CheckpointStore.js"
/**
 * @since 0.1.0
 */
export * as TokenEstimator from "./TokenEstimator.js"
/**
 * @since 0.1.0
 */
export * as Transcript from "./Transcript.js"
/**
 * @since 0.1.0
 */
export * as OpenAIChat from "./OpenAIChat.js"
/**
 * @since 0.1.0
 */
export * as OpenAIResponses from "./OpenAIResponses.js"
