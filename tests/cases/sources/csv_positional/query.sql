SELECT order_id, customer, customer = '' AS empty_customer, CHAR_LENGTH(note) AS note_length,
       amount, price, paid, note, ts
FROM orders;
