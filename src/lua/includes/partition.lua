-- Which partition of a partitioned queue a group belongs to: fnv1a32(group) % partitions, as
-- src/core/store/partitions.ts computes it (docs/scaling-out.md#partitioned-queues). A partition
-- knows its own index and the queue's count from its config (`partition`, `partitions`).

-- The 32-bit FNV-1a hash of `text`'s bytes. Doubles hold 53 bits: the multiplication by the FNV
-- prime (2^24 + 403) is split so that no step leaves that range.
local function fnv1a32(text)
  local hash = 2166136261
  for i = 1, #text do
    hash = bit.bxor(hash, string.byte(text, i)) % 4294967296
    hash = (hash * 403 + (hash % 256) * 16777216) % 4294967296
  end
  return hash
end

-- Refuses (PARTITIONED <n>, as errors.lua refuseRoot) a group of another partition: the caller
-- routed by a partition count it should not have believed (a queue deleted and created again).
local function checkPartition(M, group)
  local cfg = M.cfg
  if cfg and (cfg.partitions or 1) > 1 and fnv1a32(group) % cfg.partitions ~= cfg.partition then
    error({ err = 'PARTITIONED ' .. cfg.partitions })
  end
end
