CREATE TABLE user_behavior (
    user_id BIGINT,
    item_id BIGINT,
    category_id BIGINT,
    behavior STRING,
    ts TIMESTAMP(3),
    -- seed 004: a processing-time attribute, no WATERMARK
    proctime AS PROCTIME()
);
