export const TEST_EMBEDDING_DIM = 384;
