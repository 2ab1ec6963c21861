"""What lives beside the state, fed by the same batches: the log and GPU buffers."""
