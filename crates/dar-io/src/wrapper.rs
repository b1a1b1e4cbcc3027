//! The pass-through part of dar-io's store wrappers.
//!
//! [`CheckedStore`](crate::CheckedStore), [`MeteredStore`](crate::MeteredStore)
//! and `testing::FaultStore` each wrap an inner store in a field `inner` and
//! change only how a GET behaves; every other `ObjectStore` method forwards
//! to `inner`. This macro writes that forwarding once.

/// Implements `Display` (`Name(inner)`) and `ObjectStore` for a wrapper
/// `$store<T>` with a field `inner: T`.
///
/// - `get = method`: `get_opts` calls the wrapper's inherent
///   `async fn method(&self, &Path, GetOptions) -> object_store::Result<GetResult>`.
/// - `writes = a, lists = b` (optional): inherent `fn a(&self)` runs before
///   each write (put, multipart, delete, copy, rename) is forwarded and
///   `fn b(&self, prefix: Option<&Path>, offset: Option<&Path>)` before each
///   list (with the offset of `list_with_offset`).
///
/// A macro rather than a trait: `impl<W: Local> ObjectStore for W` is not
/// allowed for a foreign trait, and `#[async_trait]` must see the whole impl.
macro_rules! wrapper_store {
    ($store:ident, get = $get:ident $(, writes = $write:ident, lists = $list:ident)?) => {
        impl<T: ::object_store::ObjectStore> ::std::fmt::Display for $store<T> {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                write!(f, concat!(stringify!($store), "({})"), self.inner)
            }
        }

        #[::async_trait::async_trait]
        impl<T: ::object_store::ObjectStore> ::object_store::ObjectStore for $store<T> {
            async fn put_opts(
                &self,
                location: &::object_store::path::Path,
                payload: ::object_store::PutPayload,
                opts: ::object_store::PutOptions,
            ) -> ::object_store::Result<::object_store::PutResult> {
                $(self.$write();)?
                self.inner.put_opts(location, payload, opts).await
            }

            async fn put_multipart_opts(
                &self,
                location: &::object_store::path::Path,
                opts: ::object_store::PutMultipartOptions,
            ) -> ::object_store::Result<Box<dyn ::object_store::MultipartUpload>> {
                $(self.$write();)?
                self.inner.put_multipart_opts(location, opts).await
            }

            async fn get_opts(
                &self,
                location: &::object_store::path::Path,
                options: ::object_store::GetOptions,
            ) -> ::object_store::Result<::object_store::GetResult> {
                self.$get(location, options).await
            }

            fn delete_stream(
                &self,
                locations: ::futures::stream::BoxStream<
                    'static,
                    ::object_store::Result<::object_store::path::Path>,
                >,
            ) -> ::futures::stream::BoxStream<
                'static,
                ::object_store::Result<::object_store::path::Path>,
            > {
                $(self.$write();)?
                self.inner.delete_stream(locations)
            }

            fn list(
                &self,
                prefix: Option<&::object_store::path::Path>,
            ) -> ::futures::stream::BoxStream<
                'static,
                ::object_store::Result<::object_store::ObjectMeta>,
            > {
                $(self.$list(prefix, None);)?
                self.inner.list(prefix)
            }

            fn list_with_offset(
                &self,
                prefix: Option<&::object_store::path::Path>,
                offset: &::object_store::path::Path,
            ) -> ::futures::stream::BoxStream<
                'static,
                ::object_store::Result<::object_store::ObjectMeta>,
            > {
                $(self.$list(prefix, Some(offset));)?
                self.inner.list_with_offset(prefix, offset)
            }

            async fn list_with_delimiter(
                &self,
                prefix: Option<&::object_store::path::Path>,
            ) -> ::object_store::Result<::object_store::ListResult> {
                $(self.$list(prefix, None);)?
                self.inner.list_with_delimiter(prefix).await
            }

            async fn copy_opts(
                &self,
                from: &::object_store::path::Path,
                to: &::object_store::path::Path,
                options: ::object_store::CopyOptions,
            ) -> ::object_store::Result<()> {
                $(self.$write();)?
                self.inner.copy_opts(from, to, options).await
            }

            async fn rename_opts(
                &self,
                from: &::object_store::path::Path,
                to: &::object_store::path::Path,
                options: ::object_store::RenameOptions,
            ) -> ::object_store::Result<()> {
                $(self.$write();)?
                self.inner.rename_opts(from, to, options).await
            }
        }
    };
}

pub(crate) use wrapper_store;
