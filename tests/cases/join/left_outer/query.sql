-- LEFT JOIN: visits of unknown users (4, 6) are null-padded; user 2 appears twice on the right
-- (each of its visits comes out twice), visit 3 is a duplicate left row; user 7 has no visit.
SELECT v.vid, v.page, v.ts, v.uid, u.uname, u.tier
FROM visits v
LEFT JOIN users u ON v.uid = u.uid
