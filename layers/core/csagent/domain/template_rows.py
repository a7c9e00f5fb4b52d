"""The row of each catalogue template as a model: what `CatalogueData` reads its rows as, once, when
the data is validated (`CatalogueData.rows_as`).

A template's columns are declared in `tools/catalogue/templates.yaml` (`result.columns`);
`ROW_MODELS` names the model of each template's rows, and every column a template returns is a
field of its model. Templates returning the same columns share a model (`VariantRow` is a version
of a product, whichever template found it).

The rows stay as the template returned them in the data's JSON (`CatalogueData.row`, `.rows`): the
checkpoint, the Step Functions payload and a tool Lambda's answer carry them unchanged. The models
read what the store really holds: every column may be null (an OPTIONAL MATCH, a property never
set), an id or a code kept as a number reads as its digits (a tracking number, a zip), a list the
query collected nothing into reads as empty, and a column a newer template adds is kept as given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from csagent.domain.task_args import AsGiven


class RowsRefused(ValueError):
    """Rows that are not their template's model. Its message names the columns that are wrong
    (`row.items.0`, `rows.2.price`), never their values: they are the customer's."""


class CatalogueRow(AsGiven):
    """Columns read from the store graph (see the module docstring)."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)

    @field_validator("*", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any, info: ValidationInfo) -> Any:
        """A list or a map the query collected nothing into (null) reads as an empty one."""
        field = cls.model_fields.get(info.field_name or "")
        if value is None and field is not None and field.default_factory in (list, dict):
            return field.default_factory()
        return value


# -- column sets several rows share -----------------------------------------------------------------
class AddressColumns(CatalogueRow):
    """A postal address (`default_address`; the address an order ships to)."""

    address1: str | None = None
    address2: str | None = None
    city: str | None = None
    state: str | None = None
    zip: str | None = None
    country: str | None = None


class ShipmentColumns(CatalogueRow):
    """One parcel of an order (`shipments` of `order_overview`, `order_by_tracking`)."""

    tracking_id: str | None = None
    carrier: str | None = None
    status: str | None = None
    shipped_at: str | None = None
    estimated_delivery: str | None = None
    delivered_at: str | None = None


class RefundColumns(CatalogueRow):
    """A refund made on an order, and the payment method it went to, named (`refunds`)."""

    seq: int | None = None
    amount: float | None = None
    payment_method: str | None = None


class OrderLineColumns(CatalogueRow):
    """One item of an order (`items` of `order_overview`, `order_by_tracking`)."""

    line_no: int | None = None
    name: str | None = None
    product_id: str | None = None
    item_id: str | None = None
    price: float | None = None
    option_text: str | None = None


class PaymentMethodColumns(CatalogueRow):
    """A payment method as the customer knows it: its name ("Visa ending 1234", "gift card"), its
    source, and a card's brand and last four digits."""

    payment_method: str | None = None
    source: str | None = None
    brand: str | None = None
    last_four: str | None = None


# -- orders -----------------------------------------------------------------------------------------
class OrderRow(CatalogueRow):
    """An order in a list (`order_status`, `customer_orders`, `last_order`)."""

    order_id: str | None = None
    status: str | None = None
    created_at: str | None = None
    total: float | None = None
    item_count: int | None = None
    #: its lines' numbers and products' names, in no set order (`customer_orders`)
    lines: list[dict[str, Any]] = Field(default_factory=list)

    def items(self) -> list[str]:
        """Its products' names, line by line."""
        ordered = sorted(self.lines, key=lambda x: int(x.get("line_no") or 0))
        return [str(x.get("name") or "") for x in ordered]


class OrderOverviewRow(CatalogueRow):
    """An order at a glance: the row of `order_overview` (and of `order_by_tracking`, without the
    address and the refunds)."""

    order_id: str | None = None
    order_status: str | None = None
    created_at: str | None = None
    total: float | None = None
    shipments: list[ShipmentColumns] = Field(default_factory=list)
    address: AddressColumns | None = None
    refunds: list[RefundColumns] = Field(default_factory=list)
    items: list[OrderLineColumns] = Field(default_factory=list)


class OrderShipmentRow(CatalogueRow):
    """One parcel of an order and where it is (`order_tracking`, `delivery_estimate`,
    `order_carrier`)."""

    order_id: str | None = None
    order_status: str | None = None
    tracking_id: str | None = None
    carrier: str | None = None
    shipment_status: str | None = None
    shipped_at: str | None = None
    estimated_delivery: str | None = None
    delivered_at: str | None = None


class TrackingEventRow(CatalogueRow):
    """One scan of a parcel on its way (`tracking_events`)."""

    order_id: str | None = None
    tracking_id: str | None = None
    carrier: str | None = None
    seq: int | None = None
    at: str | None = None
    status: str | None = None
    location: str | None = None
    description: str | None = None


class OrderItemRow(CatalogueRow):
    """One item of an order, option by option (`order_items`; `orders_with_product`, with the
    order's status and date)."""

    order_id: str | None = None
    status: str | None = None
    created_at: str | None = None
    line_no: int | None = None
    product_name: str | None = None
    product_id: str | None = None
    item_id: str | None = None
    price: float | None = None
    options: dict[str, str] = Field(default_factory=dict)


class OrderTotalRow(CatalogueRow):
    """What an order came to, what was paid and what was refunded (`order_total`)."""

    order_id: str | None = None
    status: str | None = None
    total: float | None = None
    item_count: int | None = None
    amount_paid: float | None = None
    amount_refunded: float | None = None


class OrderPaymentRow(PaymentMethodColumns):
    """One payment or refund on an order (`order_payments`)."""

    order_id: str | None = None
    #: The order's status ("cancelled": the refund beside the payment is its cancellation's).
    order_status: str | None = None
    seq: int | None = None
    #: "payment" or "refund".
    type: str | None = None
    amount: float | None = None


class RefundStatusRow(CatalogueRow):
    """The refunds made on an order and the items of the order (`refund_status`)."""

    order_id: str | None = None
    order_status: str | None = None
    refund_count: int | None = None
    refunded_total: float | None = None
    refunds: list[RefundColumns] = Field(default_factory=list)
    #: The names of the order's items.
    items: list[str] = Field(default_factory=list)


class OrderAddressRow(AddressColumns):
    """Where an order ships to (`order_shipping_address`)."""

    order_id: str | None = None
    order_status: str | None = None


class EligibilityRow(AddressColumns):
    """Whether an order may be returned, cancelled or sent elsewhere, and by which rule
    (`return_eligibility`, `cancellation_eligibility`, `address_change_eligibility`, the last with
    the address it ships to)."""

    order_id: str | None = None
    status: str | None = None
    eligible: bool | None = None
    delivered_at: str | None = None
    rule: str | None = None


# -- the customer's account -------------------------------------------------------------------------
class PaymentMethodRow(PaymentMethodColumns):
    """A payment method of the account, with a gift card's balance (`payment_methods`,
    `gift_card_balance`)."""

    balance: float | None = None


class StatusCountRow(CatalogueRow):
    """How many of the customer's orders have a status (`order_count_by_status`)."""

    status: str | None = None
    orders: int | None = None


class ProfileRow(CatalogueRow):
    """The customer's name, email and zip (`customer_profile`)."""

    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    zip: str | None = None


class SpendingRow(CatalogueRow):
    """How many orders the customer placed and what they spent (`total_spent`)."""

    orders: int | None = None
    total_spent: float | None = None


# -- the catalogue ----------------------------------------------------------------------------------
class ProductRow(CatalogueRow):
    """A product at a glance (`product_details`, `product_by_id`)."""

    product_id: str | None = None
    name: str | None = None
    category: str | None = None
    variant_count: int | None = None
    available_variants: int | None = None
    min_price: float | None = None
    max_price: float | None = None


class VariantRow(CatalogueRow):
    """A version of a product: its options, price and whether it is in stock (`product_variants`,
    `variants_by_option`, `variants_with_options`, `variant_price`, `variant_availability`,
    `cheapest_variant`, `most_expensive_variant`; the versions a ranking picked, `ranked_versions`)."""

    product_name: str | None = None
    product_id: str | None = None
    item_id: str | None = None
    #: The options as the store writes them ("color: blue, capacity: 750ml").
    option_text: str | None = None
    options: dict[str, str] = Field(default_factory=dict)
    price: float | None = None
    available: bool | None = None


class OptionKeyRow(CatalogueRow):
    """An option a product comes in, and how many versions have it (`product_options`)."""

    product_name: str | None = None
    option_key: str | None = None
    variants: int | None = None
    #: The values it comes in ("what kinda options does the portable charger come in?" is answered
    #: with them, not the option's name alone).
    option_values: list[str] = Field(default_factory=list)


#: Between the options one `product_option_values` question asks about ("which sizes and materials":
#: "capacity|material"), each answered in the order asked.
OPTION_KEYS_SEPARATOR = "|"


class OptionValueRow(CatalogueRow):
    """A value of an option of a product, and how many versions have it, in stock or not
    (`product_option_values`)."""

    product_name: str | None = None
    option_key: str | None = None
    value: str | None = None
    variants: int | None = None
    available_variants: int | None = None


class ProductPriceRow(CatalogueRow):
    """What a product's versions cost (`product_price`)."""

    product_name: str | None = None
    product_id: str | None = None
    min_price: float | None = None
    max_price: float | None = None
    avg_price: float | None = None
    variants: int | None = None


class ProductAvailabilityRow(CatalogueRow):
    """Whether a product is in stock, and some of the versions that are (`product_availability`)."""

    product_name: str | None = None
    in_stock: bool | None = None
    available_variants: int | None = None
    variants: int | None = None
    #: The option texts of versions in stock.
    available_options: list[str] = Field(default_factory=list)


class ProductListingRow(CatalogueRow):
    """A product in a list, with what the list is about (`products_in_category`: its category and
    prices; `products_named`: its versions, prices and their option texts; `products_by_variant_count`:
    its versions; `products_under_price`: its category, lowest price and versions within the budget)."""

    product_name: str | None = None
    product_id: str | None = None
    category: str | None = None
    variants: int | None = None
    min_price: float | None = None
    max_price: float | None = None
    option_texts: list[str] = Field(default_factory=list)
    variants_in_budget: int | None = None


class CategoryRow(CatalogueRow):
    """A category of the store, how many products it has and their names (`categories`)."""

    category: str | None = None
    products: int | None = None
    names: list[str] = Field(default_factory=list)


#: The model of each template's rows (every template of `tools/catalogue/templates.yaml`, and the
#: versions a ranking picked, `cypher_catalogue.runner.RANKED_VERSIONS`).
ROW_MODELS: dict[str, type[CatalogueRow]] = {
    "order_status": OrderRow,
    "customer_orders": OrderRow,
    "last_order": OrderRow,
    "order_overview": OrderOverviewRow,
    "order_by_tracking": OrderOverviewRow,
    "order_tracking": OrderShipmentRow,
    "delivery_estimate": OrderShipmentRow,
    "order_carrier": OrderShipmentRow,
    "tracking_events": TrackingEventRow,
    "order_items": OrderItemRow,
    "orders_with_product": OrderItemRow,
    "order_total": OrderTotalRow,
    "order_payments": OrderPaymentRow,
    "refund_status": RefundStatusRow,
    "order_shipping_address": OrderAddressRow,
    "return_eligibility": EligibilityRow,
    "cancellation_eligibility": EligibilityRow,
    "address_change_eligibility": EligibilityRow,
    "default_address": AddressColumns,
    "payment_methods": PaymentMethodRow,
    "gift_card_balance": PaymentMethodRow,
    "order_count_by_status": StatusCountRow,
    "customer_profile": ProfileRow,
    "total_spent": SpendingRow,
    "product_details": ProductRow,
    "product_by_id": ProductRow,
    "product_variants": VariantRow,
    "variants_by_option": VariantRow,
    "variants_with_options": VariantRow,
    "variant_price": VariantRow,
    "variant_availability": VariantRow,
    "cheapest_variant": VariantRow,
    "most_expensive_variant": VariantRow,
    "ranked_versions": VariantRow,
    "product_options": OptionKeyRow,
    "product_option_values": OptionValueRow,
    "product_price": ProductPriceRow,
    "product_availability": ProductAvailabilityRow,
    "products_in_category": ProductListingRow,
    "products_named": ProductListingRow,
    "products_by_variant_count": ProductListingRow,
    "products_under_price": ProductListingRow,
    "categories": CategoryRow,
}


def read_rows(template_id: str | None, row: Mapping[str, Any] | None,
              rows: Sequence[Mapping[str, Any]] | None) -> list[CatalogueRow]:
    """The one row, or the rows, of `template_id` as its model (`ROW_MODELS`); none for a template
    without one. `RowsRefused` naming the columns that are wrong when a row is not its model."""
    model = ROW_MODELS.get(template_id or "")
    if model is None:
        return []
    given = [("row", row)] if row is not None else [(f"rows.{i}", r) for i, r in enumerate(rows or [])]
    read: list[CatalogueRow] = []
    wrong: set[str] = set()
    for where, raw in given:
        try:
            read.append(model.model_validate(raw))
        except ValidationError as exc:
            wrong |= {".".join([where, *(str(p) for p in e["loc"])]) for e in exc.errors()}
    if wrong:
        raise RowsRefused(", ".join(sorted(wrong)))
    return read
