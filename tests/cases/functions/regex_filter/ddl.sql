-- Nexmark q21's filter: Flink's REGEXP_EXTRACT is NULL when nothing matches (Spark: ''), so
-- IS NOT NULL keeps only the bids whose URL carries a channel_id.
CREATE TABLE bids (
  auction BIGINT,
  url STRING
);
